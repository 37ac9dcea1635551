"""The ``freeciv-faq`` natural-question set (``bench/natural_sets.py``), its reading of
Freeciv's plain-text FAQ and the question-leak check (``bench/check_question_leaks.py``) on a
small inline FAQ shaped as Debian's ``freeciv-data`` ships it (``FAQ.gz``, the project wiki's
FAQ page exported to text: a centred title, the "(from ...)" line, a "Contents" list repeating
every group and question, then blocks between lines of dashes: group titles ``1 Gameplay``,
one with a paragraph under it; entries whose numbered question sits at column 0, wrapped at
column 0, over an indented answer with a list and a command at column 0; a problem report
quoting a message; an entry with no answer; a block with no number) beside the package's
English notes (one quoting a question, one over the page limit), their translations, the
release notes and the man page, in a package tree laid out as the package unpacks (marker
present, nothing downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question or contents line is left in any file; each
answer is exactly the text after its question up to the next rule, dedented; group titles
and unanswered entries stay and ask nothing; ids are the FAQ's numbers, so an entry added
keeps the halves; an answer too short to judge leaves the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

RULE = "\n-------\n\n"
Q_MULTI = "How do I play multiplayer?"
Q_PALACE = "Can I build up the palace or throne room as in the commercial Civilization games?"
Q_DISPLAY = '"cannot open display :0"'
Q_RESTART = "How do I restart a saved game?"
Q_SAVE = "The server cannot save games!"
HEAD = (
    "                  Freeciv Frequently Asked Questions (FAQ)\n\n"
    "                 (from https://www.freeciv.org/wiki/FAQ)\n\n"
    "   Contents\n\n"
    "        1 Gameplay\n"
    "             1.1 How do I play multiplayer?\n"
    "             1.2 Can I build up the palace or throne room as in the\n"
    "               commercial Civilization games?\n"
    "             1.3 contentsline unanswered\n"
    "        2 Technical Stuff\n"
    '             2.1 "cannot open display :0"\n'
    "             2.2 How do I restart a saved game?\n"
    "             2.3 The server cannot save games!\n"
    "        3 Mac OS X\n"
)
E_MULTI = (
    "1.1 How do I play multiplayer?\n\n"
    "   You can either join a network game run by someone else, or host your\n"
    "   own.\n\n"
    "   To join a network game, choose Connect to Network Game.\n"
)
E_PALACE = (
    "1.2 Can I build up the palace or throne room as in the commercial Civilization\n"
    "games?\n\n"
    "   No. This feature is not present in the commercial games either, and\n"
    "   it was never worth the work.\n"
)
E_UNANSWERED = "1.3 An entry nobody answered yet\n"
E_DISPLAY = (
    '2.1 "cannot open display :0"\n\n'
    "   Set the DISPLAY variable to the screen the client should use:\n\n"
    "        Terminal\n"
    "                export DISPLAY=:0\n"
)
E_RESTART = (
    "2.2 How do I restart a saved game?\n\n"
    "   Start the server with the saved game, or type in the chatline\n"
    "/load mygame.sav.xz\n\n"
    "   and the game continues from that turn.\n"
)
E_SAVE = (
    "2.3 The server cannot save games!\n\n"
    "   Check that the save directory exists and that the server may write\n"
    "   there.\n"
)
FAQ = (
    HEAD
    + RULE
    + "1 Gameplay\n"
    + RULE
    + E_MULTI
    + RULE
    + E_PALACE
    + RULE
    + E_UNANSWERED
    + RULE
    + "2 Technical Stuff\n"
    + RULE
    + E_DISPLAY
    + RULE
    + E_RESTART
    + RULE
    + E_SAVE
    + RULE
    + "   A block that opens with no number stays as text.\n"
    + RULE
    + "3 Mac OS X\n\n"
    + "   None of the current development team use the Mac OS.\n"
)
A_MULTI = (
    "You can either join a network game run by someone else, or host your\nown.\n\n"
    "To join a network game, choose Connect to Network Game."
)
A_PALACE = (
    "No. This feature is not present in the commercial games either, and\n"
    "it was never worth the work."
)
A_DISPLAY = (
    "Set the DISPLAY variable to the screen the client should use:\n\n"
    "     Terminal\n"
    "             export DISPLAY=:0"
)
A_RESTART = (
    "Start the server with the saved game, or type in the chatline\n"
    "/load mygame.sav.xz\n\n"
    "   and the game continues from that turn."
)
A_SAVE = "Check that the save directory exists and that the server may write\nthere."
ASKED = (Q_MULTI, Q_PALACE, Q_DISPLAY, Q_RESTART, Q_SAVE)
ANSWERS = {"1.1": A_MULTI, "1.2": A_PALACE, "2.1": A_DISPLAY, "2.2": A_RESTART, "2.3": A_SAVE}


def test_split_freeciv_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_freeciv_faq(FAQ)
    # each numbered entry with an answer asked, in order (wrapped lines joined, spaces
    # folded, the number out); the answer the block after the question up to the next rule,
    # dedented as far as every line allows; the id the number
    nsc.assert_split_answers(text, qa, ASKED, ANSWERS)
    # the contents list and the rules leave; the title and source line stay; group titles
    # stay as headings, the last with its paragraph; the unanswered entry and the block with
    # no number stay as text
    assert "contentsline" not in text and "Contents" not in text and "-----" not in text
    assert text.startswith("Freeciv Frequently Asked Questions (FAQ)\n\n(from https://")
    assert "## 1 Gameplay" in text and "## 2 Technical Stuff" in text
    assert text.rstrip().endswith(
        "## 3 Mac OS X\n\nNone of the current development team use the Mac OS."
    )
    assert "1.3 An entry nobody answered yet" in text
    assert "A block that opens with no number stays as text." in text
    for _, _, a in qa:
        assert "Mac OS" not in a and "Technical Stuff" not in a and "nobody" not in a


def test_split_freeciv_faq_edges() -> None:
    # no rule: the whole text is title and contents, nothing asked, the contents leave
    assert ns.split_freeciv_faq("Title\n\n   Contents\n   1.1 Q?\n") == ("Title\n", [])
    assert ns.split_freeciv_faq("Just a note.\n") == ("Just a note.\n", [])
    # no "Contents" line: the text before the first rule stays whole
    text, qa = ns.split_freeciv_faq("Intro line.\n-------\n1.1 Q?\n\n   An answer here.\n")
    assert qa == [("1.1", "Q?", "An answer here.")] and text == "Intro line.\n\nAn answer here.\n"
    # a repeated number is told apart; a number with a closing dot is read; an indented
    # numbered line is answer text, not a heading; a question at the end of the text without
    # a closing rule still gets its answer
    twice = (
        "T\n-------\n1.1 One?\n\n   1 a.\n-------\n1.1. Two?\n\n   2 b.\n"
        "   3.4 not a heading\n-------\n\n\n2.5 Last?\n\n   Final words."
    )
    assert ns.split_freeciv_faq(twice)[1] == [
        ("1.1", "One?", "1 a."),
        ("1.1-2", "Two?", "2 b.\n3.4 not a heading"),
        ("2.5", "Last?", "Final words."),
    ]
    # a heading runs on only up to the first blank line: the answer's column-0 lines after
    # it are answer text
    wrapped = "T\n-------\n1.1 Why does\nit wrap?\n\nBecause.\nIt does.\n"
    assert ns.split_freeciv_faq(wrapped)[1] == [("1.1", "Why does it wrap?", "Because.\nIt does.")]
    # a block whose number is indented opens with no heading: text, asking nothing
    indented = "T\n-------\n   4.1 Indented?\n\n   Some text here.\n"
    assert ns.split_freeciv_faq(indented) == ("T\n\n4.1 Indented?\n\nSome text here.\n", [])
    # three or more blank lines inside an answer fold to one
    gaps = "T\n-------\n1.1 Q?\n\n   a\n\n\n\n   b\n"
    assert ns.split_freeciv_faq(gaps)[1] == [("1.1", "Q?", "a\n\nb")]


_WORD = st.sampled_from(["city", "unit", "server", "client", "ruleset", "tileset", "map"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),  # a group title (a number with no dot) or an entry
            st.lists(_WORD, min_size=1, max_size=8),  # the heading's words
            st.integers(min_value=1, max_value=3),  # lines the heading is wrapped over
            st.lists(_WORD, min_size=0, max_size=12),  # the answer's words (none: unanswered)
            st.integers(min_value=1, max_value=3),  # the entry's number (repeats happen)
        ),
        min_size=1,
        max_size=7,
    ),
    st.booleans(),  # the "Contents" list before the first rule
)
def test_split_freeciv_faq_property(
    entries: list[tuple[bool, list[str], int, list[str], int]], contents: bool
) -> None:
    """Random blocks between rules, group titles and entries, each heading wrapped over one
    to three column-0 lines, answers over indented lines of up to four words, some
    unanswered, with or without the contents list: one question per answered entry, in
    order, the number the id (repeats ``-2``), the answer the dedented block, in the page; no
    asked question and no contents line left in it; group titles and unanswered entries
    kept."""
    head = "   Freeciv FAQ\n\n"
    if contents:
        head += "   Contents\n" + "".join(f"      contentsline{n}\n" for n in range(len(entries)))
    blocks = []
    expected = []
    seen: dict[str, int] = {}
    for n, (group, words, wrap, awords, number) in enumerate(entries):
        marker = f"group{n}x" if group else f"entry{n}x"
        heading = [marker, *words]
        cut = [" ".join(heading[i::wrap]) for i in range(wrap) if heading[i::wrap]]
        label = f"{n + 1}" if group else f"1.{number}"
        lines = [" ".join(awords[i : i + 4]) for i in range(0, len(awords), 4)]
        answer = "\n".join(lines)
        body = "".join(f"   {ln}\n" for ln in lines)
        blocks.append(f"{label} " + "\n".join(cut) + "\n\n" + body)
        if not group and answer:
            seen[label] = seen.get(label, 0) + 1
            key = label if seen[label] == 1 else f"{label}-{seen[label]}"
            expected.append((key, " ".join(cut), answer))
    text, qa = ns.split_freeciv_faq(head + RULE + RULE.join(blocks))
    assert qa == expected
    for _, _, a in qa:
        assert a in text
    for n, (group, _, _, awords, _) in enumerate(entries):
        assert (f"entry{n}x" in text) == (not group and not awords)
        assert (f"group{n}x" in text) == group
    if all(e[3] or e[0] for e in entries):
        nsc.assert_random_split(text, qa, expected)
    assert "contentsline" not in text and "Contents" not in text and "---" not in text
    assert text.startswith("Freeciv FAQ\n")


# -- the set, built from a package tree shaped like Debian's freeciv-data ------------------


def _man_page(body: str) -> str:
    head = '.TH FREECIV-CLIENT 6 "2023"\n.SH NAME\nfreeciv-client \\- a client\n'
    return f"{head}.SH DESCRIPTION\n{body}"


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.FREECIV_PACKAGE, "3.0.6-1+deb12u1")
    doc: Path = root / ns.FREECIV_DOC
    write_gz(doc / ns.FREECIV_FAQ, faq)
    write_gz(doc / "README.gz", f"Freeciv README.\n\nPlayers ask: {Q_RESTART} Use /load.\n")
    write_gz(doc / "HOWTOPLAY.gz", "How to play: build cities near rivers.\n")
    write_gz(doc / "README.fcdb.gz", "The player database.\n")
    write_gz(doc / "README.modpack_installer.gz", "The modpack installer.\n")
    write_gz(doc / "README.governor.gz", "The city governor. " * 9_000)
    (doc / "BUGS").write_text("Report bugs to the tracker.\n")
    (doc / "README.Debian").write_text("Debian: the GTK look.\n")
    write_gz(doc / "README.de.gz", "leftout Deutsch\n")
    (doc / "BUGS.sv").write_text("leftout svenska\n")
    write_gz(doc / "NEWS.gz", "leftout release notes\n")
    write_gz(doc / "NEWS-3.0.gz", "leftout release notes\n")
    write_gz(doc / "changelog.gz", "leftout\n")
    (doc / "copyright").write_text("leftout\n")
    write_gz(root / ns.FREECIV_MAN[0], _man_page("Connects to a Freeciv server."))
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (:data:`FAQ`), the documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_freeciv_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.freeciv_faq_set()
    nsc.assert_package_set(
        nset,
        "freeciv-faq",
        ids=list(ANSWERS),
        files={
            "FAQ.md",
            "README",
            "HOWTOPLAY",
            "README.fcdb",
            "README.modpack_installer",
            "BUGS",
            "README.Debian",
            "man/freeciv-client.6.md",
        },
        source="FAQ.md",
        version="3.0.6-1+deb12u1",
        too_long="README.governor",
        answers=ANSWERS,
    )
    corpus = " ".join(nset.files.values())
    assert "leftout" not in corpus and "contentsline" not in corpus
    # the note quoting a question scrubbed, its other text kept; the man page converted
    assert "Players ask:" in nset.files["README"] and "Use /load." in nset.files["README"]
    assert "Connects to a Freeciv server." in nset.files["man/freeciv-client.6.md"]
    assert ".TH" not in nset.files["man/freeciv-client.6.md"]
    assert nset.left_out == ()


def test_freeciv_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(E_SAVE, "2.3 The server cannot save games!\n\n   See BUGS.\n")
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.freeciv_faq_set(), Q_SAVE, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    # the FAQ as shipped: the check finds every question there, so it could fail
    nsc.assert_leak_checked(ns.freeciv_faq_set(), {"FAQ": FAQ}, ASKED)


def test_freeciv_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    more = FAQ.replace(
        "   A block that opens",
        "2.4 How do I change the language of my client?\n\n"
        "   Set the LANG variable before starting the client.\n" + RULE + "   A block that opens",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.freeciv_faq_set, lambda: write_gz(doc_dir / ns.FREECIV_FAQ, more)
    )


def test_freeciv_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.FREECIV_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.freeciv_faq_set, ns.FREECIV_FAQ)
