"""The ``emacs-faq`` natural-question set (``bench/natural_sets.py``), its reading of the
GNU Emacs FAQ and the question-leak check (``bench/check_question_leaks.py``) on a small
inline ``efaq.info`` shaped like Debian's ``emacs-common`` ships it (makeinfo's Info: a
preamble, ``\\x1f``-separated nodes with ``File: efaq.info,  Node: ...`` lines, the top
node's and every chapter's menu, chapters underlined by ``*``, numbered sections underlined
by ``=`` and titled by their question, two titled by a short topic, a footnote, the concept
index with makeinfo's ``[index]`` marker, the tag table) in a package tree laid out as the
package unpacks (``etc/`` under ``usr/share/emacs/<version>``, Debian's notes, the man pages,
the files left out; marker present, nothing downloaded); offline, no embedding model, no test
reads the real package.

What the set's numbers rest on: no question's text is left in any file (the FAQ's headings,
or a note in ``etc/`` quoting one); each answer is exactly the text under its section up to
the next; a section titled by a short topic asks nothing and keeps its heading and text; ids
are the question's slug, so an added section keeps the halves; an answer too short to judge
leaves the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import check_question_leaks as cql
import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

Q_META = "What does ‘M-x COMMAND’ mean?"
Q_DOTEMACS = "How do I debug a ‘.emacs’ file?"
Q_BACKUP = "How do I disable backup files?"
Q_AUX = "Making Emacs write all auxiliary files somewhere else"
Q_DIRED = "Dired says, ‘no file on this line’ when I try to do something."
ASKED = (Q_META, Q_DOTEMACS, Q_BACKUP, Q_AUX, Q_DIRED)

INFO = f"""This is efaq.info, produced by makeinfo version 6.8 from efaq.texi.

Copyright © 1994, 1995 Reuven M. Lerner
INFO-DIR-SECTION Emacs
START-INFO-DIR-ENTRY
* Emacs FAQ: (efaq).            Frequently Asked Questions about Emacs.
END-INFO-DIR-ENTRY

\x1f
File: efaq.info,  Node: Top,  Next: FAQ notation,  Prev: (dir),  Up: (dir)

The GNU Emacs FAQ
*****************

This is the GNU Emacs FAQ.

* Menu:

* FAQ notation::
* Common requests::
* Finding Emacs and related packages::
* Concept index::

\x1f
File: efaq.info,  Node: FAQ notation,  Next: Common requests,  Up: Top

1 FAQ notation
**************

This chapter describes notation used in the GNU Emacs FAQ.

* Menu:

* Extended commands::

\x1f
File: efaq.info,  Node: Extended commands,  Up: FAQ notation

1.1 {Q_META}
=================================

‘M-x COMMAND’ means type ‘M-x’, then type the name of the command, then
type <RET>.(1)

   ---------- Footnotes ----------

   (1) On a keyboard without <Meta>, type <ESC> x.

\x1f
File: efaq.info,  Node: Common requests,  Up: Top

5 Common requests
*****************

* Menu:

* Debugging a customization file::
* Disabling backups::
* Not writing files to the current directory::
* Dired claims that no file is on this line::

\x1f
File: efaq.info,  Node: Debugging a customization file,  Up: Common requests

5.1 {Q_DOTEMACS}
================================

Start Emacs with the ‘--debug-init’ command-line option.  This enables
the Emacs Lisp debugger before evaluating your ‘.emacs’ file.

\x1f
File: efaq.info,  Node: Disabling backups,  Up: Common requests

5.2 {Q_BACKUP}
==============================

You probably don’t want to do this, since backups are useful.  To do it
anyway, add this to your init file:

     (setq make-backup-files nil)

\x1f
File: efaq.info,  Node: Not writing files to the current directory,  Up: Common requests

5.3 {Q_AUX}
======================================================

By default, Emacs puts backup and auto-save files in the directory of
the file they belong to.  Customize ‘backup-directory-alist’.

\x1f
File: efaq.info,  Node: Dired claims that no file is on this line,  Up: Common requests

5.4 {Q_DIRED}
===============================================================

Dired uses a regular expression to find the beginning of a file name.
Set ‘directory-listing-before-filename-regexp’.

5.4.1 An older answer
---------------------

In Emacs 21 this was ‘dired-move-to-filename-regexp’.

\x1f
File: efaq.info,  Node: Finding Emacs and related packages,  Up: Top

8 Finding Emacs and related packages
************************************

* Menu:

* Downloading Emacs::
* Spell-checkers::
* Unanswered section::

\x1f
File: efaq.info,  Node: Downloading Emacs,  Up: Finding Emacs and related packages

8.1 Downloading Emacs
=====================

Information on downloading Emacs is available at the Emacs website.

\x1f
File: efaq.info,  Node: Spell-checkers,  Up: Finding Emacs and related packages

8.2 Spell-checkers
==================

Various spell-checkers are compatible with Emacs, including Hunspell.

\x1f
File: efaq.info,  Node: Unanswered section,  Up: Finding Emacs and related packages

8.3 Is this section unanswered?
===============================

\x1f
File: efaq.info,  Node: Concept index,  Prev: Finding Emacs and related packages,  Up: Top

Concept index
*************

\x00\x08[index\x00\x08]
* Menu:

* Backups, disabling:                    Disabling backups.    (line 6)
* Debugging .emacs file:                 Debugging a customization file.
                                                               (line 6)

\x1f
Tag Table:
Node: Top\x7f200
Node: FAQ notation\x7f400
\x1f
End Tag Table
"""


INFO = nsc.info_underlined(INFO)
ANSWERS = {
    "what-does-m-x-command-mean": (
        "‘M-x COMMAND’ means type ‘M-x’, then type the name of the command, then\n"
        "type <RET>.(1)\n\n"
        "   ---------- Footnotes ----------\n\n"
        "   (1) On a keyboard without <Meta>, type <ESC> x."
    ),
    "how-do-i-debug-a-emacs-file": (
        "Start Emacs with the ‘--debug-init’ command-line option.  This enables\n"
        "the Emacs Lisp debugger before evaluating your ‘.emacs’ file."
    ),
    "how-do-i-disable-backup-files": (
        "You probably don’t want to do this, since backups are useful.  To do it\n"
        "anyway, add this to your init file:\n\n"
        "     (setq make-backup-files nil)"
    ),
    "making-emacs-write-all-auxiliary-files-s": (
        "By default, Emacs puts backup and auto-save files in the directory of\n"
        "the file they belong to.  Customize ‘backup-directory-alist’."
    ),
    "dired-says-no-file-on-this-line-when-i-t": (
        "Dired uses a regular expression to find the beginning of a file name.\n"
        "Set ‘directory-listing-before-filename-regexp’.\n\n"
        "#### 5.4.1 An older answer\n\n"
        "In Emacs 21 this was ‘dired-move-to-filename-regexp’."
    ),
}
FAQ_FILES = {
    "efaq/00-the-gnu-emacs-faq.md",
    "efaq/01-1-faq-notation.md",
    "efaq/02-5-common-requests.md",
    "efaq/03-8-finding-emacs-and-related-packages.md",
}


def test_emacs_faq_asks_questions_not_short_topics() -> None:
    assert ns.emacs_faq_asks("What is XEmacs?")
    assert ns.emacs_faq_asks("Why?")  # short, but asked
    assert ns.emacs_faq_asks(Q_AUX)  # a task of four words or more
    assert ns.emacs_faq_asks("I don’t have enough disk space to install Emacs")
    assert ns.emacs_faq_asks(Q_DIRED)
    assert not ns.emacs_faq_asks("Downloading Emacs")
    assert not ns.emacs_faq_asks("Spell-checkers")
    assert not ns.emacs_faq_asks("Current GNU distributions")  # three words, no "?"


def test_split_emacs_faq_questions_answers_and_topics() -> None:
    markdown = ns.info_markdown(INFO)
    chapters, qa = ns.split_texinfo_chapters(
        markdown, first_question_chapter=1, asks=ns.emacs_faq_asks
    )
    assert [q for _, q, _ in qa] == list(ASKED)
    assert [num for num, _, _ in qa] == ["1.1", "5.1", "5.2", "5.3", "5.4"]
    assert [a for _, _, a in qa] == list(ANSWERS.values())
    assert {f"efaq/{rel}" for rel in chapters} == FAQ_FILES  # the index node dropped
    text = "\n".join(chapters.values())
    nsc.assert_page_keeps_answers(qa, text)
    # menus and node lines are gone; the index and the tag table too
    assert "* Menu:" not in text and "Node:" not in text and "line 6" not in text
    # the short topics keep their headings and their text, which is in no answer
    finding = chapters["03-8-finding-emacs-and-related-packages.md"]
    assert "### 8.1 Downloading Emacs" in finding and "### 8.2 Spell-checkers" in finding
    assert "Various spell-checkers are compatible" in finding
    assert all("spell-checkers" not in a and "Information on" not in a for _, _, a in qa)
    # the unanswered section asks nothing and leaves the corpus
    assert "unanswered" not in text
    # without ``asks`` every numbered section of the chapters is asked, as before
    _, every = ns.split_texinfo_chapters(markdown, first_question_chapter=1)
    assert [q for _, q, _ in every] == [*ASKED, "Downloading Emacs", "Spell-checkers"]


_WORD = st.sampled_from(["buffer", "frame", "window", "mode", "key", "face", "mark", "kill"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.lists(_WORD, min_size=0, max_size=8),  # the title's words after the tag
                st.lists(_WORD, min_size=0, max_size=15),  # the answer's words (may be none)
                st.booleans(),  # the title ends with "?"
            ),
            max_size=4,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_split_emacs_faq_property(chapters: list[list[tuple[list[str], list[str], bool]]]) -> None:
    """Random chapters of random sections, some titled by a short topic, some unanswered:
    one question per answered section whose title asks, in order, its answer the text under
    it and in its chapter; no asked title's word left; a topic's heading and text kept."""
    nodes = ["Preamble.\n", "File: efaq.info,  Node: Top,  Up: (dir)\n\nThe FAQ\n*******\n"]
    expected: list[tuple[str, str]] = []
    topics: list[str] = []
    for c, sections in enumerate(chapters, start=1):
        head = f"{c} Chapter{c}"
        nodes.append(
            f"File: efaq.info,  Node: C{c},  Up: Top\n\n{head}\n{'*' * len(head)}\n\n"
            f"This chapter holds questions about {c}.\n"
        )
        for k, (words, answer, asked) in enumerate(sections, start=1):
            title = " ".join([f"title{c}x{k}", *words]) + ("?" if asked else "")
            line = f"{c}.{k} {title}"
            body = " ".join(["Answer", *answer]) if answer else ""
            nodes.append(
                f"File: efaq.info,  Node: S{c}x{k},  Up: C{c}\n\n{line}\n{'=' * len(line)}\n\n"
                f"{body}\n"
            )
            if not ns.emacs_faq_asks(title):
                topics.append(line)
            elif body:
                expected.append((title, body))
    files, qa = ns.split_texinfo_chapters(
        ns.info_markdown("\x1f\n".join(nodes)), first_question_chapter=1, asks=ns.emacs_faq_asks
    )
    assert [(q, a) for _, q, a in qa] == expected
    text = "\n".join(files.values())
    for _, _, a in qa:
        assert a in text
    for topic in topics:
        assert f"### {topic}" in text
    left = set(re.findall(r"title\d+x\d+", text))
    assert left == {t.split()[1] for t in topics}


# -- the set, built from a package tree shaped like Debian's emacs-common --------------------

ETC = "usr/share/emacs/28.2/etc"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, info: str = INFO) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.EMACS_PACKAGE, "1:28.2+1-15+deb12u4")
    write_gz(root / ns.EMACS_FAQ, info)
    write_gz(root / "usr/share/info/emacs/transient.info.gz", "the Transient manual, left out\n")
    etc = root / ETC
    _write(
        etc / "PROBLEMS",
        "Known problems with GNU Emacs\n\n** Emacs crashes at startup.\n\n"
        f"{Q_DOTEMACS} Use --debug-init.  This is a known problem.\n",
    )
    _write(etc / "tutorials/TUTORIAL", "Emacs tutorial.  C-v moves forward one screenful.\n")
    _write(etc / "tutorials/TUTORIAL.de", "Einführung in Emacs, left out\n")
    _write(etc / "MACHINES", "Machines that GNU Emacs runs on.\n")
    _write(etc / "README", "This directory contains the architecture-independent files.\n")
    for skipped in ("NEWS", "NEWS.27", "TODO", "DEBUG", "AUTHORS", "refcards/refcard.tex"):
        _write(etc / skipped, "left out\n")
    doc = root / ns.EMACS_DOC
    write_gz(doc / "README.gz", "This directory tree holds version 28.2 of GNU Emacs.\n")
    write_gz(doc / "README.Debian.gz", f"Debian's changes.\n\n{Q_BACKUP}\nSee the FAQ.\n")
    _write(doc / "BUGS", "If you think you may have found a bug in GNU Emacs, read PROBLEMS.\n")
    write_gz(doc / "changelog.Debian.gz", "left out\n")
    _write(doc / "copyright", "left out\n")
    man = root / "usr/share/man/man1"
    write_gz(
        man / "emacs.emacs.1.gz", ".TH EMACS 1\n.SH NAME\nemacs \\- GNU project Emacs editor\n"
    )
    write_gz(man / "etags.emacs.1.gz", ".TH ETAGS 1\n.SH NAME\netags \\- generate tag file\n")
    write_gz(man / "ctags.emacs.1.gz", ".so man1/etags.1\n")
    return root


def test_emacs_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.emacs_faq_set()
    assert [q.qid for q in nset.questions] == [f"emacs-faq:{k}" for k in ANSWERS]
    assert nset.left_out == ()
    assert set(nset.files) == FAQ_FILES | {
        "etc/PROBLEMS",
        "etc/tutorials/TUTORIAL",
        "etc/MACHINES",
        "etc/README",
        "README",
        "README.Debian",
        "BUGS",
        "man/emacs.emacs.1.md",
        "man/etags.emacs.1.md",
    }
    corpus = nsc.flat(" ".join(nset.files.values()))
    for q in nset.questions:
        assert nsc.flat(q.text) not in corpus
        assert q.answers[0][0] in nset.files[q.source]
        assert q.answers[0][0] == ANSWERS[q.qid.removeprefix("emacs-faq:")]
        assert q.source.startswith("efaq/")
    # the notes quoting a question: scrubbed, their other text kept
    assert "Use --debug-init.  This is a known problem." in nset.files["etc/PROBLEMS"]
    assert "See the FAQ." in nset.files["README.Debian"]
    nsc.assert_files_as_written(nset)
    assert "1:28.2+1-15+deb12u4" in nset.note and "4 chapter files" in nset.note
    assert "not asked: Downloading Emacs | Spell-checkers" in nset.note
    assert "etc/PROBLEMS, etc/tutorials/TUTORIAL, etc/MACHINES, etc/README" in nset.note
    assert "README, README.Debian, BUGS, emacs.emacs.1, etags.emacs.1" in nset.note
    nsc.assert_held_out("emacs-faq")


def test_emacs_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = INFO.replace(
        "Start Emacs with the ‘--debug-init’ command-line option.  This enables\n"
        "the Emacs Lisp debugger before evaluating your ‘.emacs’ file.\n",
        "Use ‘--debug-init’.\n",
    )
    _package(tmp_path, monkeypatch, info)
    nset = ns.emacs_faq_set()
    nsc.assert_left_out(nset, Q_DOTEMACS, len(ASKED) - 1)  # scrubbed all the same


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy (the short topics, not asked, are not
    questions), and finds every question in the FAQ as shipped (it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.emacs_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert sorted(asked) == sorted(ASKED)
    assert cql.find_leaks(nset.files, asked, False) == []
    shipped = cql.find_leaks({"efaq.info": INFO}, asked, False)
    assert {lk.question for lk in shipped if lk.kind == "exact"} == set(ASKED)
    # a short topic asked would be a copy in its own answer: why it is not asked
    topics = cql.find_leaks(nset.files, ["Spell-checkers", "Downloading Emacs"], False)
    assert {lk.kind for lk in topics} == {"exact"}


def test_emacs_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.emacs_faq_set)
    # a section added at the head of chapter 5 renumbers the others: the ids stay
    more = INFO.replace(
        "\x1f\nFile: efaq.info,  Node: Debugging a customization file,",
        "\x1f\nFile: efaq.info,  Node: New entry,  Up: Common requests\n\n"
        "5.1 How do I turn on line numbers?\n===================================\n\n"
        "Use ‘display-line-numbers-mode’ in any buffer you like.\n\n"
        "\x1f\nFile: efaq.info,  Node: Debugging a customization file,",
    ).replace("5.1 How do I debug", "5.2 How do I debug")
    write_gz(root / ns.EMACS_FAQ, nsc.info_underlined(more))
    nsc.assert_halves_kept(ns.emacs_faq_set, first, dev, test)


def test_emacs_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _package(tmp_path, monkeypatch)
    (root / ns.EMACS_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=re.escape("no usr/share/info/emacs/efaq.info.gz")):
        ns.emacs_faq_set()
