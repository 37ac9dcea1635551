"""The question-leak check (``bench/check_question_leaks.py``) on very short questions: a copy
is matched as whole words, and a one-word question is a copy only alone on a line (a
heading, a list or contents entry, a link text), never as a word of running text; a short
question of two or three words that is copied (a cross-reference quoting it) is still
caught. Offline, on small inline texts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import check_question_leaks as cql
import natural_sets as ns


def _kinds(files: dict[str, str], questions: list[str]) -> set[tuple[str, str, str]]:
    return {(lk.question, lk.file, lk.kind) for lk in cql.find_leaks(files, questions, False)}


def test_a_one_word_question_in_running_text_is_a_word_not_a_copy() -> None:
    """cryptsetup's 1.2 "WARNINGS" against the word in an answer and in crypttab(5)."""
    files = {
        "FAQ.md": "there are no visible warnings for the user.\n",
        "man/crypttab.5.md": "## OPTIONS\n\nprint warnings if a device does not exist\n",
        "notes.md": "WARNINGS and caveats are listed below.\n",  # not alone on its line
    }
    assert _kinds(files, ["WARNINGS"]) == {
        ("WARNINGS", "FAQ.md", "word"),
        ("WARNINGS", "man/crypttab.5.md", "word"),
        ("WARNINGS", "notes.md", "word"),
    }


@pytest.mark.parametrize(
    "line",
    [
        "## WARNINGS",
        "  * **1.2 WARNINGS**",
        "12.1 Warnings:",
        "[Warnings](#12-warnings)",
        "- [Warnings](faq.html#warnings)",
    ],
)
def test_a_one_word_question_alone_on_a_line_is_a_copy(line: str) -> None:
    """A heading, a numbered entry, a contents link: the entry's title copied."""
    files = {"FAQ.md": f"# FAQ\n\n{line}\n\nSome text.\n"}
    leaks = cql.find_leaks(files, ["WARNINGS"], False)
    assert [(lk.kind, lk.context) for lk in leaks] == [("exact", " ".join(line.split()))]


def test_a_one_word_question_alone_in_an_html_element_is_a_copy() -> None:
    files = {
        "a.html": "<p>Read the <a href='#x'>Authorship</a> entry.</p>",
        "b.html": "<p>Its authorship is shared.</p>",
    }
    assert _kinds(files, ["Authorship"]) == {
        ("Authorship", "a.html", "exact"),
        ("Authorship", "b.html", "word"),
    }


def test_a_short_distinctive_question_copied_in_running_text_is_caught() -> None:
    """R's "What is CRAN?" quoted by a cross-reference, Automake's "Reporting Bugs" by an
    Info note, a two-word question with a hyphenated word: exact copies (exit status 1),
    however short."""
    files = {
        "R-FAQ/01.md": "sources are available via CRAN (see What is CRAN?). Also ...\n",
        "automake/01.md": "for more information on bug reports, *note Reporting\nBugs::.\n",
        "cryptsetup.md": "Use cryptsetup-reencrypt? Not on a mounted device.\n",
    }
    qs = ["What is CRAN?", "Reporting Bugs", "cryptsetup-reencrypt?"]
    assert _kinds(files, qs) == {
        ("What is CRAN?", "R-FAQ/01.md", "exact"),
        ("Reporting Bugs", "automake/01.md", "exact"),
        ("cryptsetup-reencrypt?", "cryptsetup.md", "exact"),
    }


def test_copies_are_whole_words() -> None:
    """ "What is S?" is not in "what is sometimes called" nor "What is R?" in "what is
    really used" (the bare forms, 3 words); they are in "see What is S?" and "what is r,"."""
    prose = {"a.md": "what is sometimes called a ragged array; what is really used is ...\n"}
    assert _kinds(prose, ["What is S?", "What is R?"]) == set()
    quoted = {"a.md": "Becker's S (see What is S?) and, what is R, anyway.\n"}
    assert _kinds(quoted, ["What is S?", "What is R?"]) == {
        ("What is S?", "a.md", "exact"),
        ("What is R?", "a.md", "bare"),
    }


def test_exit_status_counts_copies_not_words(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def one_set(files: dict[str, str]) -> None:
        q = ns.NaturalQuestion("s:1.2", "WARNINGS", (("answer text here", 1.0),))
        nset = ns.NaturalSet("s", tmp_path, [q], "note", files)
        monkeypatch.setattr(ns, "load_natural_set", lambda name, emb: nset)

    one_set({"FAQ.md": "No visible warnings for the user.\n"})
    assert cql.main(["--sets", "s"]) == 0
    assert (
        "0 exact/bare copies, 0 long runs, 1 one-word questions as words" in capsys.readouterr().out
    )
    one_set({"FAQ.md": "## Warnings\n\nNo visible warnings for the user.\n"})
    assert cql.main(["--sets", "s"]) == 1
    assert "[exact 1w] FAQ.md: 'WARNINGS'" in capsys.readouterr().out
