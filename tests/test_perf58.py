"""Hot paths after stop 58 (bench/README.md, "(helper perf58)"): ``has_invisible_format``
(every new URI and tag label) walks only text holding an unprintable character."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference_80e60c2 import count_calls, old_has_invisible_format, short_texts
from treehop.validation import has_invisible_format

_TRICKY = st.sampled_from(
    "\u200c\u200d\u200b\u2060\ufeff\xad\u200e\u202e\u2066\u2028\u2029\x9b\x85\x00\x7f"
    "\xa0\u3000\ud800\ue000\U000e0041\u0600\u061c\U0001f469\u0628\u0915a /\u4e2d\xe9"
)


def test_has_invisible_format_answers_as_before_for_every_short_text() -> None:
    """Every text of up to four characters of each kind, and every format character and
    Unicode class between each pair (``short_texts``: 200,679 texts, ~0.6 s): each place a
    joiner or another format character can stand, which 3,000 random strings of up to 40
    characters (stop 76: 3.8 s of CPU) sampled and rarely put a joiner between two non-ASCII
    letters in. Longer texts: the property test below (helper ci77)."""
    for s in short_texts():
        assert has_invisible_format(s) is old_has_invisible_format(s), repr(s)


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        st.one_of(st.characters(codec=None, exclude_categories=()), _TRICKY),
        min_size=5,
        max_size=40,
    )
)
def test_has_invisible_format_answers_as_before(s: str) -> None:
    assert has_invisible_format(s) is old_has_invisible_format(s)


@pytest.mark.parametrize(
    "unit", ["/données/café", "/设计文档", "/\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"]
)
def test_a_printable_uri_is_not_walked(unit: str) -> None:
    # 1a7b0ec (main after stop 58): each non-ASCII URI walked character by character in a
    # generator (~2.8 us a write, 1.7 us in 80e60c2); a printable one is now cleared in C
    short, long = "viking://resources" + unit, "viking://resources" + unit * 60
    assert not has_invisible_format(short) and not has_invisible_format(long)
    grows = count_calls(lambda: has_invisible_format(long)) - count_calls(
        lambda: has_invisible_format(short)
    )
    if unit.isprintable():
        assert grows == 0  # str.isascii and str.isprintable, whatever the length
    else:  # (a kept joiner: the one walk, a few calls per character)
        assert grows <= 4 * (len(long) - len(short))
    assert has_invisible_format(long + "\u200b")  # (and what it must refuse, still refused)


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("/\u0645\u200d\u0645", False),  # a joiner between two Arabic letters: its real use
        ("/\u0645\u200c\u0645", False),
        ("/\U0001f469\u200d\U0001f4bb", False),  # an emoji sequence
        ("/\u0915\u094d\u200d\u0937", False),  # Devanagari half form
        ("/a\u200db", True),  # between ASCII letters: only a look-alike
        ("/\u0645\u200d", True),  # at the end
        ("\u200d\u0645/", True),  # at the start
        ("/\u0645\u200d\u200d\u0645", True),  # beside another format character
        ("/\u0645\u2060\u0645", True),  # a word joiner is no joiner of scripts
    ],
)
def test_joiners_kept_only_between_two_non_ascii_characters(text: str, refused: bool) -> None:
    # (the random strings above rarely put a joiner between two non-ASCII letters: a change
    # dropping U+200D from the kept joiners passed them; these name the cases)
    assert has_invisible_format(text) is refused
    assert old_has_invisible_format(text) is refused
