"""``natural_sets.scrub_questions`` on short questions and on questions quoted without their
closing "?": a short question (under 4 words) is deleted where it stands as a copy (a
cross-reference, a quotation, a heading or a contents entry) and kept as words of a
sentence; a longer question's bare form is deleted as whole words; a one-word question only
alone on a line. The copies are those the leak check (``bench/check_question_leaks.py``)
found in r-faq, autotools-faq, perlfaq, lsof-faq and grace-faq, written here as small inline
texts (no Debian package). A property test: whatever copies are mixed into filler text, the
leak check finds none after the scrub. Offline."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import check_question_leaks as cql
import natural_sets as ns


def _q(text: str, answer: str = "an answer") -> ns.NaturalQuestion:
    return ns.NaturalQuestion(f"q:{text}", text, ((answer, 1.0),))


def _scrub(text: str, *questions: str) -> str:
    files, _ = ns.scrub_questions({"a.md": text}, [_q(q) for q in questions])
    out: str = files["a.md"]
    return out


@pytest.mark.parametrize(
    ("text", "question", "expected"),
    [
        # r-faq's cross-references
        (
            "a CRAN site (see What is CRAN?).\n",
            "What is CRAN?",
            "a CRAN site (see ).\n",
        ),
        ("See What is CRAN?, for information on", "What is CRAN?", "See , for information on"),
        ("Wilks’ S (see What is S?) and Scheme", "What is S?", "Wilks’ S (see ) and Scheme"),
        # autotools' Texinfo and Info cross-references (one across a line break)
        (
            "top level (see Expanded Before Required).",
            "Expanded Before Required",
            "top level (see ).",
        ),
        ("bug reports, *Note Reporting\n   Bugs::.", "Reporting Bugs", "bug reports, *Note ::."),
        ("this (*note Errors with distclean::);", "Errors with distclean", "this (*note ::);"),
        # perlfaq7's quotation, and its bare form quoted
        ('See the answer to "What\'s a closure?".', "What's a closure?", 'See the answer to "".'),
        ('the entry "what\'s a closure" explains', "What's a closure?", 'the entry "" explains'),
        ("as “What is CRAN?” says", "What is CRAN?", "as “” says"),
        # grace-faq: the user guide's heading and contents entry
        ("- 1.1 What is Grace?\n- 1.2 Copyright", "What is Grace?", "- 1.1 \n- 1.2 Copyright"),
        ("## 1.1 What is Grace?\n\nGrace is", "What is Grace?", "## 1.1 \n\nGrace is"),
        ("**What is S?**\n", "What is S?", "****\n"),
        ("[What is CRAN?](#what-is-cran)\n", "What is CRAN?", "[](#what-is-cran)\n"),
    ],
)
def test_a_short_question_standing_as_a_copy_is_deleted(
    text: str, question: str, expected: str
) -> None:
    assert _scrub(text, question) == expected


@pytest.mark.parametrize(
    ("text", "question"),
    [
        ("For reporting bugs in the manual, write to us.", "Reporting Bugs"),
        ("Reporting bugs is easy.\n", "Reporting Bugs"),  # starts a sentence, not alone
        ("This is what is said about it.", "What is S?"),  # not inside a longer word
        ("what is sometimes called", "What is S?"),
        ("Citing R packages is covered below.", "Citing R"),
        ("Perl books are listed in perlfaq2.", "Perl Books"),
        ("when errors with distclean happen, rerun", "Errors with distclean"),
    ],
)
def test_a_short_question_as_words_of_a_sentence_is_kept(text: str, question: str) -> None:
    assert _scrub(text, question) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("there are no visible warnings for the user.\n", None),
        ("WARNINGS and caveats are listed below.\n", None),
        ('see "WARNINGS" below\n', None),  # one word: only alone on a line is a copy
        ("## WARNINGS\n\ntext", "## \n\ntext"),
        ("* **1.2 WARNINGS**\n", "* **1.2 **\n"),
        ("[Warnings](#12-warnings)\n", "[](#12-warnings)\n"),
    ],
)
def test_a_one_word_question_goes_only_alone_on_a_line(text: str, expected: str | None) -> None:
    """cryptsetup's entry 1.2 "WARNINGS": the word of its answers stays."""
    assert _scrub(text, "WARNINGS") == (text if expected is None else expected)


def test_a_long_question_quoted_without_its_question_mark_is_deleted() -> None:
    """lsof's 08-freebsd (across a line break), perlfaq6's quotations, r-faq's sub-heading."""
    q_lsof = "How do I report an lsof bug?"
    text = 'Follow the answer to the "How\ndo I report an lsof bug" to report it.'
    assert _scrub(text, q_lsof) == 'Follow the answer to the "" to report it.'
    q_perl = "How do I decode or create those %-encodings on the web?"
    text = '(in perlfaq9: "How do I decode or create those %-encodings on the web" and'
    assert _scrub(text, q_perl) == '(in perlfaq9: "" and'
    text = "**2.5.1 How can R be installed (Unix-like)**\n"
    assert _scrub(text, "How can R be installed?") == "**2.5.1  (Unix-like)**\n"
    # as whole words only: a longer word that starts like the question's last word stays
    text = "How can R be installedness measured"
    assert _scrub(text, "How can R be installed?") == text


@pytest.mark.parametrize("reverse", [False, True])
def test_a_longer_question_is_deleted_whole_before_a_shorter_one_eats_into_it(
    reverse: bool,
) -> None:
    """lsof's 3.33.2 quotes "...adequate for Solaris 7, 8 or 9?"; another question is its
    first words ("...adequate?"): the bare form of the shorter must not cut the longer's copy
    in two, whatever the questions' order."""
    short, long = (
        "Why does lsof say the compiler isn't adequate?",
        "Why does lsof say the compiler isn't adequate for Solaris 7, 8 or 9?",
    )
    order = [long, short] if reverse else [short, long]
    text = 'consult "Why does lsof say the compiler isn\'t adequate for\nSolaris 7, 8 or 9?" for'
    assert _scrub(text, *order) == 'consult "" for'


def test_the_answers_are_scrubbed_as_the_corpus_is() -> None:
    page = "Obtain it via CRAN (see What is CRAN?).\n\nReporting bugs is easy."
    qs = [_q("What is CRAN?", page), _q("Reporting Bugs", page)]
    files, scrubbed = ns.scrub_questions({"a.md": page}, qs)
    want = "Obtain it via CRAN (see ).\n\nReporting bugs is easy."
    assert files == {"a.md": want}
    assert [a for q in scrubbed for a, _ in q.answers] == [want, want]
    assert [q.text for q in scrubbed] == ["What is CRAN?", "Reporting Bugs"]


def test_check_removed_refuses_a_long_questions_bare_form_not_a_short_question() -> None:
    q = _q("How do I report an lsof bug?")
    with pytest.raises(ValueError):
        ns._check_removed({"a.md": 'the "how do I\nreport an lsof bug" question'}, [q])
    ns._check_removed({"a.md": "how do I report an lsof bugfix"}, [q])  # whole words
    ns._check_removed({"a.md": "so: what is cran? a network."}, [_q("What is CRAN?")])


# -- property: after the scrub, the leak check finds no copy -----------------------------

SHORT = ["What is CRAN?", "Reporting Bugs", "What's a closure?", "Errors with distclean"]
LONG = ["How do I report an lsof bug?", "How can R be installed?"]
FILLER = ["alpha", "beta", "gamma", "delta", "the", "a", "of", "for", "in", "page", "text"]
COPY_CONTEXTS = [
    "(see {q})",
    "See {q}, for more.",
    "*note {q}::",
    'the answer to "{q}".',
    "\n## 1.2 {q}\n",
    "\n- {q}\n",
    "\n**{q}**\n",
    "“{q}”",
    "[{q}](#x)",
]
BARE_CONTEXTS = ['the "{b}" question', "\n**2.5.1 {b} (Unix-like)**\n", "(see {b})"]


def _variant(text: str, case: int, break_at: int) -> str:
    """``text`` upper-, lower- or as-cased, one of its spaces a line break."""
    text = (text, text.upper(), text.lower())[case]
    gaps = [i for i, c in enumerate(text) if c == " "]
    if gaps:
        i = gaps[break_at % len(gaps)]
        text = text[:i] + "\n" + text[i + 1 :]
    return text


copies = st.tuples(
    st.sampled_from(SHORT + LONG),
    st.booleans(),  # the bare form (a long question's) rather than the text
    st.integers(0, 8),
    st.integers(0, 2),
    st.integers(0, 5),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FILLER), copies), min_size=1, max_size=12))
def test_no_copy_is_left_for_the_leak_check(parts: list[object]) -> None:
    out: list[str] = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
            continue
        assert isinstance(part, tuple)
        q, bare, ctx, case, brk = part
        if bare and q in LONG:
            piece = BARE_CONTEXTS[ctx % len(BARE_CONTEXTS)].format(b=_variant(q[:-1], case, brk))
        else:
            piece = COPY_CONTEXTS[ctx].format(q=_variant(q, case, brk))
        out.append(piece)
    text = " ".join(out)
    asked = SHORT + LONG
    files, _ = ns.scrub_questions({"a.md": text}, [_q(q) for q in asked])
    left = [lk for lk in cql.find_leaks(files, asked, False) if lk.kind in ("exact", "bare")]
    assert left == [], (text, files["a.md"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(FILLER), min_size=0, max_size=5),
    st.sampled_from(["reporting bugs", "errors with distclean", "warnings", "citing r"]),
    st.lists(st.sampled_from(FILLER), min_size=1, max_size=5),
)
def test_a_short_question_inside_a_sentence_is_never_touched(
    before: list[str], phrase: str, after: list[str]
) -> None:
    text = " ".join([*before, phrase, *after]) + "."
    asked = ["Reporting Bugs", "Errors with distclean", "WARNINGS", "Citing R"]
    assert _scrub(text, *asked) == text
