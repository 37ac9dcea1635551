"""File and directory abstracts as read: an off-by-default option (helper quality78).

usage83 made a passage's abstract keep its text as written (``S_TIME_FORMAT``, not
``STIMEFORMAT``) but left a file's and a directory's abstract with the old cleaning, because
those are embedded and the global step ranks by them. ``ABSTRACTS_AS_READ`` /
``ExtractiveSummarizer(abstracts_as_read=)`` is that change behind a switch, so the benchmark
can measure it (bench/README.md, "(helper quality78)"); these tests pin what it changes, that
it is off unless asked for, and that a wrong value is refused before any text is read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.errors import InvalidConfigError, TreehopError
from treehop.ingest import summaries
from treehop.ingest.summaries import ChildSummary, ExtractiveSummarizer

from treehop_test_doubles import BagOfWordsEmbedder

CHANGELOG = (
    "Set S_TIME_FORMAT and swap_use_gnuplot for sadc, says <sebastien.godard@wanadoo.fr> today.\n"
    "Later lines of the changelog follow here.\n"
)
README = "# Examples\n\nRun gen_numa and sar_graph to draw the data. More follows.\n"


def test_off_by_default_the_embedded_cleaning_is_unchanged() -> None:
    abstract = ExtractiveSummarizer().summarize_file("changelog", CHANGELOG, "text")[0]
    # (an underscore inside a word stays either way since helper ingest77; off, a ``>``
    # after a character still goes)
    assert "S_TIME_FORMAT and swap_use_gnuplot" in abstract
    assert "wanadoo.fr today." in abstract.partition(": ")[2]  # the sentence part
    folder = ExtractiveSummarizer().summarize_directory("examples", [], README)[0]
    assert "gen_numa and sar_graph" in folder


def test_on_a_files_and_a_folders_abstract_keep_the_text_as_written() -> None:
    on = ExtractiveSummarizer(abstracts_as_read=True)
    abstract = on.summarize_file("changelog", CHANGELOG, "text")[0]
    assert "STIMEFORMAT" not in abstract
    assert "S_TIME_FORMAT and swap_use_gnuplot" in abstract
    assert "<sebastien.godard@wanadoo.fr> today." in abstract
    folder, overview = on.summarize_directory("examples", [ChildSummary("a.py", "a", True)], README)
    assert folder == "Examples: Run gen_numa and sar_graph to draw the data."
    assert overview.startswith(folder)
    md = on.summarize_file("FAQ.md", "# FAQ\n\nUse **S_TIME_FORMAT** to `set` it.\n", "markdown")
    assert md[0] == "FAQ: Use S_TIME_FORMAT to set it."  # the reader's marks still go


def test_the_module_setting_is_read_at_each_summary_and_an_argument_overrides_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    default, off = ExtractiveSummarizer(), ExtractiveSummarizer(abstracts_as_read=False)
    monkeypatch.setattr(summaries, "ABSTRACTS_AS_READ", True)
    assert "wanadoo.fr> today" in default.summarize_file("c", CHANGELOG, "text")[0]
    assert "gen_numa" in default.summarize_directory("examples", [], README)[0]
    assert "wanadoo.fr today" in off.summarize_file("c", CHANGELOG, "text")[0]
    monkeypatch.setattr(summaries, "ABSTRACTS_AS_READ", False)
    assert "wanadoo.fr today" in default.summarize_file("c", CHANGELOG, "text")[0]


def test_a_client_indexes_with_the_option_and_without_it(tmp_path: Path) -> None:
    (tmp_path / "doc" / "examples").mkdir(parents=True)
    (tmp_path / "doc" / "changelog").write_text(CHANGELOG, encoding="utf-8")
    (tmp_path / "doc" / "examples" / "README.md").write_text(README, encoding="utf-8")
    (tmp_path / "doc" / "examples" / "irq.sh").write_text("echo irq\n", encoding="utf-8")
    got = {}
    for flag in (False, True):
        summarizer = ExtractiveSummarizer(abstracts_as_read=flag)
        with Treehop(None, embedder=BagOfWordsEmbedder(), summarizer=summarizer) as th:
            th.add_resource(str(tmp_path / "doc"), target_uri="viking://resources/doc")
            nodes = th.store.get(
                ["viking://resources/doc/changelog", "viking://resources/doc/examples"]
            )
            got[flag] = [n.abstract for n in nodes if n is not None]
    assert len(got[True]) == 2 and len(got[False]) == 2
    assert "fr> today" in got[True][0] and "gen_numa" in got[True][1]
    assert "fr today" in got[False][0] and "gen_numa" in got[False][1]


class _NoSuperInit(ExtractiveSummarizer):
    def __init__(self) -> None:  # a caller's subclass that never calls the base's
        self.calls = 0


def test_a_subclass_that_skips_the_base_init_still_summarises() -> None:
    assert "wanadoo.fr today" in _NoSuperInit().summarize_file("c", CHANGELOG, "text")[0]


@pytest.mark.parametrize("bad", [1, 0, "yes", "", 1.0, [True], object()])
def test_a_value_that_is_not_a_bool_is_refused(bad: object) -> None:
    with pytest.raises(InvalidConfigError, match="abstracts_as_read must be True, False or None"):
        ExtractiveSummarizer(abstracts_as_read=bad)  # type: ignore[arg-type]


@settings(max_examples=100, deadline=None)
@given(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=True),
        st.text(max_size=8),
        st.lists(st.booleans(), max_size=2),
    )
)
def test_only_a_bool_or_none_is_taken(value: object) -> None:
    """Property: the validator takes exactly ``None`` and the two bools, refuses the rest
    with a ``TreehopError`` (no ``TypeError`` escapes, no truthy value is taken for on)."""
    if value is None or isinstance(value, bool):
        assert ExtractiveSummarizer(abstracts_as_read=value).abstracts_as_read is value
    else:
        with pytest.raises(TreehopError):
            ExtractiveSummarizer(abstracts_as_read=value)  # type: ignore[arg-type]


_IDENT = st.from_regex(r"[a-z]{1,6}(_[a-z0-9]{1,6}){1,2}", fullmatch=True)


@settings(max_examples=100, deadline=None)
@given(st.lists(_IDENT, min_size=1, max_size=8), st.sampled_from(["text", "code", "markdown"]))
def test_identifiers_in_a_files_first_sentence_come_back_whole(words, kind) -> None:
    """Property: with the option on, every underscored identifier of a file's first sentence
    is in its abstract as written; off too since helper ingest77 (an underscore inside a
    word is text): the sentence is the same (no other mark in it)."""
    body = "Set " + " ".join(words) + " now.\nMore text follows.\n"
    text = body if kind != "markdown" else "# Notes\n\n" + body
    on = ExtractiveSummarizer(abstracts_as_read=True).summarize_file("f", text, kind)[0]
    off = ExtractiveSummarizer().summarize_file("f", text, kind)[0]
    sentence_on, sentence_off = on.rpartition(": ")[2], off.rpartition(": ")[2]
    assert all(w in sentence_on.split() for w in words)
    assert sentence_off == sentence_on
