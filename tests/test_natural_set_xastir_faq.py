"""The ``xastir-faq`` natural-question set (``bench/natural_sets.py``), its reading of
Xastir's plain-text FAQ and the question-leak check (``bench/check_question_leaks.py``) on a
small inline FAQ shaped as Debian's ``xastir`` ships it (``FAQ.gz``: a centred title and a
paragraph, "The Questions" repeating every group and question, underlined, then "The
Answers", underlined: group titles at column 0 (``1. Background``, ``2.  Running Xastir``)
over indented entries, a question wrapped onto deeper lines, ids with a letter
(``2.1a``) and a closing dot (``2.2.``), answers with a numbered list, an indented line of
dashes under a heading, an address and another group's number; an entry with no answer; a
trailer after a line of dashes at column 0) beside the package's notes (one quoting a
question, one over the page limit), the release notes, licences and the man pages, in a
package tree laid out as the package unpacks (marker present, nothing downloaded); offline,
no embedding model, no test reads the real package.

What the set's numbers rest on: no question or line of the question list is left in any
file; each answer is exactly the text after its question up to the next entry, group title
or rule, dedented; group titles, unanswered entries and the trailer stay and ask nothing;
ids are the FAQ's numbers, so an entry added keeps the halves; an answer too short to judge
leaves the set but not the corpus's scrubbing.
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

Q_WHAT = "What is Xastir?"
Q_SUPPORT = "Whom do I contact for support?"
Q_BOOT = 'Why do I get error messages when running "bootstrap.sh"?'
Q_WARN = "Why do I get strange warnings when I run bootstrap.sh"
Q_CC = "Why won't Xastir compile with my system's cc?"
Q_SLOW = "Xastir runs slowly/loads maps slowly."
Q_FREETYPE = (
    "The linking stage is failing because it isn't linking in the freetype library. What to do?"
)
Q_RESTART = "How can I restart Xastir remotely/from a script/command-line?"
HEAD = (
    "                  Xastir Frequently Asked Questions\n\n\n"
    "The latest version of this FAQ is always available from the Xastir\n"
    "project's Git repository.\n\n"
    "The Questions\n"
    "-------------\n\n"
    "1.  Background\n\n"
    "    1.1 listline What is Xastir?\n"
    "    1.2 listline Whom do I contact for support?\n\n"
    "2.  Running Xastir\n\n"
    "    2.1 listline bootstrap\n"
    "    2.3 listline The linking stage is failing because it isn't linking in the\n"
    "        freetype library.  What to do?\n\n"
    "The Answers\n"
    "-----------\n\n"
)
E_WHAT = (
    "    1.1 What is Xastir?\n\n\n"
    "    Xastir is an APRS(tm) client program that uses amateur radio and\n"
    "    Internet services to convey GPS mapping.\n\n"
)
E_SUPPORT = (
    "    1.2 Whom do I contact for support?\n\n"
    "    Two mailing lists, by subscription only:\n\n"
    "        1.  Ask on the xastir list.\n\n"
    "        2.  Ask on the xastir-dev list.\n\n"
)
E_UNANSWERED = "    1.3 An entry nobody answered yet\n\n"
E_BOOT = (
    '    2.1  Why do I get error messages when running "bootstrap.sh"?\n\n'
    "    The build needs automake 1.6.3 or later:\n\n"
    "       cd automake-1.6.3\n"
    "       ./configure --prefix=/home/me/src/xastir\n\n"
)
E_WARN = (
    "    2.1a  Why do I get strange warnings when I run bootstrap.sh\n\n"
    "    Most of these warnings are harmless with newer tools.\n\n"
)
E_CC = (
    "    2.2. Why won't Xastir compile with my system's cc?\n\n"
    "    One of the following causes:\n\n"
    "        Missing headers\n"
    "        ---------------\n\n"
    "    Install the Motif development package first.\n"
    "    1.5 is the Motif version some old systems carry.\n"
    "        127.0.0.1 localhost\n\n"
)
E_FREETYPE = (
    "    2.3 The linking stage is failing because it isn't linking in the\n"
    "        freetype library.  What to do?\n\n"
    '    Add "-lfreetype" to the link line.\n\n'
)
E_SLOW = (
    "   2.4 Xastir runs slowly/loads maps slowly.\n\n"
    "   Index the maps once, then turn off the grid and the labels.\n\n\n"
)
E_RESTART = (
    "    3.1 How can I restart Xastir remotely/from a script/command-line?\n\n"
    "    Send a SIGHUP to the process:\n\n"
    "        kill -SIGHUP `cat ~/.xastir/xastir.pid`\n\n"
)
TRAILER = (
    "----------------------------------------------------------------\n\n"
    "APRS(tm) is a Trademark of Bob Bruninga\n\n"
    "    4.1 A numbered line after the rule stays as trailer text.\n"
)
FAQ = (
    HEAD
    + "1. Background\n\n"
    + E_WHAT
    + E_SUPPORT
    + E_UNANSWERED
    + "\n2. Running Xastir\n\n"
    + E_BOOT
    + E_WARN
    + E_CC
    + E_FREETYPE
    + E_SLOW
    + "3.  Features\n\n"
    + E_RESTART
    + TRAILER
)
A_WHAT = (
    "Xastir is an APRS(tm) client program that uses amateur radio and\n"
    "Internet services to convey GPS mapping."
)
A_SUPPORT = (
    "Two mailing lists, by subscription only:\n\n"
    "    1.  Ask on the xastir list.\n\n"
    "    2.  Ask on the xastir-dev list."
)
A_BOOT = (
    "The build needs automake 1.6.3 or later:\n\n"
    "   cd automake-1.6.3\n"
    "   ./configure --prefix=/home/me/src/xastir"
)
A_WARN = "Most of these warnings are harmless with newer tools."
A_CC = (
    "One of the following causes:\n\n"
    "    Missing headers\n"
    "    ---------------\n\n"
    "Install the Motif development package first.\n"
    "1.5 is the Motif version some old systems carry.\n"
    "    127.0.0.1 localhost"
)
A_FREETYPE = 'Add "-lfreetype" to the link line.'
A_SLOW = "Index the maps once, then turn off the grid and the labels."
A_RESTART = "Send a SIGHUP to the process:\n\n    kill -SIGHUP `cat ~/.xastir/xastir.pid`"
ASKED = (Q_WHAT, Q_SUPPORT, Q_BOOT, Q_WARN, Q_CC, Q_FREETYPE, Q_SLOW, Q_RESTART)
ANSWERS = {
    "1.1": A_WHAT,
    "1.2": A_SUPPORT,
    "2.1": A_BOOT,
    "2.1a": A_WARN,
    "2.2": A_CC,
    "2.3": A_FREETYPE,
    "2.4": A_SLOW,
    "3.1": A_RESTART,
}


def test_split_xastir_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_xastir_faq(FAQ)
    # each numbered entry of its group with an answer asked, in order (wrapped lines
    # joined, spaces folded, the number out); the answer the lines after the question up
    # to the next entry, group title or rule at column 0, dedented; the id the number (a
    # letter kept, a closing dot dropped)
    nsc.assert_split_answers(text, qa, ASKED, ANSWERS)
    # the question list, both part titles and their underlines leave; the title and the
    # paragraph stay; group titles stay as headings, spaces folded; the unanswered entry
    # and the trailer (its numbered line too) stay as text
    assert "listline" not in text and "The Questions" not in text and "The Answers" not in text
    assert "-------------\n" not in text.split("## 1")[0]
    assert text.startswith(
        "Xastir Frequently Asked Questions\n\nThe latest version of this FAQ is always"
    )
    assert "## 1 Background" in text and "## 2 Running Xastir" in text
    assert "## 3 Features" in text
    assert "1.3 An entry nobody answered yet" in text
    assert text.rstrip().endswith(
        "-" * 64 + "\n\nAPRS(tm) is a Trademark of Bob Bruninga\n\n"
        "    4.1 A numbered line after the rule stays as trailer text."
    )
    for _, _, a in qa:
        assert "Background" not in a and "Features" not in a and "nobody" not in a
        assert "Trademark" not in a


def test_split_xastir_faq_edges() -> None:
    # without both part titles nothing is asked and the text stays whole
    assert ns.split_xastir_faq("Title\n\n1. G\n\n    1.1 Q?\n\n    A.\n") == (
        "Title\n\n1. G\n\n    1.1 Q?\n\n    A.\n",
        [],
    )
    only_answers = "T\n\nThe Answers\n\n1. G\n\n    1.1 Q?\n\n    An answer.\n"
    assert ns.split_xastir_faq(only_answers)[1] == []
    # "The Answers" before "The Questions" is no answers part
    swapped = "The Answers\n1. G\n    1.1 Q?\n\n    A.\nThe Questions\n"
    assert ns.split_xastir_faq(swapped)[1] == []
    # an entry before any group, or under another group's number, is answer text; the
    # underline is optional; the text before the first entry stays
    odd = (
        "T\nThe Questions\nlistline\nThe Answers\n\n    1.1 Early?\n\n    Intro words.\n"
        "2. G\n\n    2.1 Q one?\n\n    One answer.\n    3.2 Other group text.\n"
    )
    text, qa = ns.split_xastir_faq(odd)
    assert qa == [("2.1", "Q one?", "One answer.\n3.2 Other group text.")]
    assert (
        text == "T\n\n1.1 Early?\n\nIntro words.\n\n## 2 G\n\nOne answer.\n3.2 Other group text.\n"
    )
    # a repeated number is told apart; three or more blank lines in an answer fold to one;
    # an unindented numbered line with a second dot is no group title (the answer dedented
    # as far as every line allows, its ends stripped)
    twice = (
        "The Questions\nThe Answers\n-----\n1. G\n    1.1 One?\n\n    a\n\n\n\n    b\n"
        "    1.1 Two?\n\n    c d.\n1.2 not a group\n"
    )
    assert ns.split_xastir_faq(twice)[1] == [
        ("1.1", "One?", "a\n\nb"),
        ("1.1-2", "Two?", "c d.\n1.2 not a group"),
    ]
    # a question at the end of the text is asked nothing; a heading runs on to the first
    # blank line only
    end = (
        "The Questions\nThe Answers\n1. G\n    1.1 Why does\n      it wrap?\n\n    Yes.\n"
        "    1.2 Last?"
    )
    text, qa = ns.split_xastir_faq(end)
    assert qa == [("1.1", "Why does it wrap?", "Yes.")]
    assert text == "## 1 G\n\nYes.\n\n1.2 Last?\n"


_WORD = st.sampled_from(["map", "tnc", "station", "port", "config", "gps", "weather"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),  # a group title or an entry of the current group
            st.lists(_WORD, min_size=1, max_size=8),  # the heading's words
            st.integers(min_value=1, max_value=3),  # lines the heading is wrapped over
            st.lists(_WORD, min_size=0, max_size=12),  # the answer's words (none: unanswered)
            st.integers(min_value=1, max_value=3),  # the entry's number (repeats happen)
            st.sampled_from(["", "a", "."]),  # a letter or a closing dot after the number
        ),
        min_size=1,
        max_size=7,
    ),
    st.booleans(),  # the underline under "The Answers"
)
def test_split_xastir_faq_property(
    entries: list[tuple[bool, list[str], int, list[str], int, str]], underline: bool
) -> None:
    """Random group titles and entries after the question list, each entry's heading
    wrapped over one to three indented lines, answers over indented lines of up to four
    words, some unanswered, numbers repeating, with a letter or a closing dot: one question
    per answered entry under a group, in order, the number the id (repeats ``-2``), the
    answer the dedented lines, in the page; no asked question and no list line left in it;
    group titles, unanswered entries and entries before any group kept."""
    head = "   Xastir FAQ\n\nThe Questions\n" + "".join(
        f"    listline{n}\n" for n in range(len(entries))
    )
    head += "The Answers\n" + ("-----------\n" if underline else "") + "\n"
    blocks = []
    expected = []
    seen: dict[str, int] = {}
    group = 0
    for n, (is_group, words, wrap, awords, number, tail) in enumerate(entries):
        lines = [" ".join(awords[i : i + 4]) for i in range(0, len(awords), 4)]
        body = "".join(f"    {ln}\n" for ln in lines) + "\n"
        if is_group:
            group += 1
            blocks.append(f"{group}. group{n}x {' '.join(words)}\n\n" + body)
            continue
        heading = [f"entry{n}x", *words]
        cut = [" ".join(heading[i::wrap]) for i in range(wrap) if heading[i::wrap]]
        label = f"{max(group, 1)}.{number}{tail}"
        blocks.append(f"    {label} " + "\n        ".join(cut) + "\n\n" + body)
        if group and awords:
            key = label.rstrip(".")
            seen[key] = seen.get(key, 0) + 1
            key = key if seen[key] == 1 else f"{key}-{seen[key]}"
            expected.append((key, " ".join(cut), "\n".join(lines)))
    text, qa = ns.split_xastir_faq(head + "".join(blocks))
    assert qa == expected
    for _, _, a in qa:
        assert a in text
    group = 0
    for n, (is_group, _, _, awords, _, _) in enumerate(entries):
        group += is_group
        asked = not is_group and group > 0 and bool(awords)
        assert (f"entry{n}x" in text) == (not is_group and not asked)
        assert (f"group{n}x" in text) == is_group
    if all(e[0] or e[3] for e in entries) and entries[0][0]:
        nsc.assert_random_split(text, qa, expected)
    assert "listline" not in text and "The Questions" not in text and "---" not in text
    assert text.startswith("Xastir FAQ\n")


# -- the set, built from a package tree shaped like Debian's xastir -------------------------


def _man_page(name: str, body: str) -> str:
    head = f'.TH {name.upper()} 1 "2023"\n.SH NAME\n{name} \\- a tool\n'
    return f"{head}.SH DESCRIPTION\n{body}"


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.XASTIR_PACKAGE, "2.1.8-1+b1")
    doc: Path = root / ns.XASTIR_DOC
    write_gz(doc / ns.XASTIR_FAQ, faq)
    write_gz(doc / "README.gz", f"Xastir README.\n\nUsers ask: {Q_SLOW} Index the maps.\n")
    write_gz(doc / "README.Getting-Started.gz", "Getting started: set your callsign.\n")
    write_gz(doc / "README.MAPS.gz", "Maps: GeoTIFF and shapefiles. " * 6_000)
    write_gz(doc / "README.OSM_maps.gz", "OpenStreetMap tiles.\n")
    write_gz(doc / "README.GIT.gz", "Git: clone the repository.\n")
    write_gz(doc / "CONTRIBUTING.md.gz", "# Contributing\n\nSend pull requests.\n")
    (doc / "README.sudo").write_text("Sudo: run the installer.\n")
    (doc / "README.Debian").write_text("Debian: the xastir-ax25 group.\n")
    (doc / "UPGRADE").write_text("Upgrade: back up your config.\n")
    (doc / "AUTHORS").write_text("Developers and contributors.\n")
    write_gz(doc / "NEWS.gz", "leftout release notes\n")
    write_gz(doc / "COPYING.gz", "leftout licence\n")
    write_gz(doc / "COPYING.LIB.LESSTIF.gz", "leftout licence\n")
    write_gz(doc / "LICENSE.gz", "leftout licence\n")
    write_gz(doc / "changelog.gz", "leftout\n")
    write_gz(doc / "changelog.Debian.gz", "leftout\n")
    (doc / "copyright").write_text("leftout\n")
    for rel in ns.XASTIR_MAN:
        name = Path(rel).name.removesuffix(".1.gz")
        write_gz(root / rel, _man_page(name, f"The {name} program talks APRS."))
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (:data:`FAQ`), the documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_xastir_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.xastir_faq_set()
    nsc.assert_package_set(
        nset,
        "xastir-faq",
        ids=list(ANSWERS),
        files={
            "FAQ.md",
            "README",
            "README.Getting-Started",
            "README.OSM_maps",
            "README.GIT",
            "CONTRIBUTING.md",
            "README.sudo",
            "README.Debian",
            "UPGRADE",
            "AUTHORS",
            "man/xastir.1.md",
            "man/callpass.1.md",
            "man/xastir_udp_client.1.md",
            "man/testdbfawk.1.md",
        },
        source="FAQ.md",
        version="2.1.8-1+b1",
        too_long="README.MAPS",
        answers=ANSWERS,
    )
    corpus = " ".join(nset.files.values())
    assert "leftout" not in corpus and "listline" not in corpus
    # the note quoting a question scrubbed, its other text kept; the man pages converted
    assert "Users ask:" in nset.files["README"] and "Index the maps." in nset.files["README"]
    assert "The callpass program talks APRS." in nset.files["man/callpass.1.md"]
    assert ".TH" not in nset.files["man/xastir.1.md"]
    assert nset.left_out == ()


def test_xastir_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(f"    {A_FREETYPE}\n", "    See INSTALL.\n")
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.xastir_faq_set(), Q_FREETYPE, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    # the FAQ as shipped: the check finds every question there, so it could fail
    nsc.assert_leak_checked(ns.xastir_faq_set(), {"FAQ": FAQ}, ASKED)


def test_xastir_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    more = FAQ.replace(
        "3.  Features\n",
        "    2.5 How do I change the language of the menus?\n\n"
        "    Pick another language file under File->Configure->Defaults.\n\n"
        "3.  Features\n",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.xastir_faq_set, lambda: write_gz(doc_dir / ns.XASTIR_FAQ, more)
    )


def test_xastir_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.XASTIR_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.xastir_faq_set, ns.XASTIR_FAQ)
