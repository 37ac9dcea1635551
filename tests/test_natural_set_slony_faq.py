"""The ``slony-faq`` natural-question set (``bench/natural_sets.py``), its reading of Slony-I's
FAQ and the question-leak check (``bench/check_question_leaks.py``) on small inline pages
shaped as Debian's ``slony1-2-doc`` ships them (``adminguide/appendix.html``, the DocBook
DSSSL stylesheets' chunked HTML, upper-case tags and attributes, each closing ``>`` on the
next line: the navigation header, the chapter's table of contents, section 7.1 "Frequently
Asked Questions" holding a ``qandaset`` laid out in divs: the generated list of every
question, then ``QANDADIV`` groups with an ``<H3>`` title over ``QANDAENTRY`` divs, each a
``QUESTION`` div (an anchor, the number in bold, paragraphs, a log excerpt in a ``<PRE>``)
and one or more ``ANSWER`` divs opening with an empty bold label; the navigation footer)
beside the guide's other pages (a chapter quoting a question, the slonik command reference,
a schema function page), the book's index, a page over the limit and the notes outside the
guide, in a package tree laid out as the package unpacks (marker present, nothing
downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question and no line of the generated list is left in any
file; each answer is exactly its entry's answer divs; ids are the FAQ's numbers, so an entry
added keeps the halves; an answer too short to judge leaves the set but not the corpus's
scrubbing.
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

HEAD = (
    '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">\n<HTML\n><HEAD\n>'
    '<TITLE\n>Appendix</TITLE\n></HEAD\n><BODY\nCLASS="CHAPTER"\n><DIV\n'
    'CLASS="NAVHEADER"\n><TABLE\nSUMMARY="Header navigation table"\n><TR\n><TH\nCOLSPAN="5"\n>'
    '<SPAN\nCLASS="PRODUCTNAME"\n>Slony-I</SPAN\n> 2.2.11 Documentation</TH\n></TR\n><TR\n>'
    '<TD\n><A\nHREF="slony-logshipping.html"\nACCESSKEY="P"\n>Prev</A\n></TD\n><TD\n><A\n'
    'HREF="releasechecklist.html"\nACCESSKEY="N"\n>Next</A\n></TD\n></TR\n></TABLE\n><HR\n>'
    '</DIV\n><DIV\nCLASS="CHAPTER"\n><H1\n><A\nNAME="APPENDIX"\n></A\n>Chapter 7. Appendix'
    '</H1\n><DIV\nCLASS="TOC"\n><DL\n><DT\n><B\n>Table of Contents</B\n></DT\n><DT\n>7.1. '
    '<A\nHREF="appendix.html#FAQ"\n>tocline Frequently Asked Questions</A\n></DT\n></DL\n>'
    '</DIV\n><DIV\nCLASS="SECT1"\n><H1\nCLASS="SECT1"\n><A\nNAME="FAQ"\n>7.1. Frequently '
    "Asked Questions</A\n></H1\n>"
)
FOOT = (
    '</DIV\n></DIV\n><DIV\nCLASS="NAVFOOTER"\n><HR\n><TABLE\nSUMMARY="Footer navigation '
    'table"\n><TR\n><TD\n><A\nHREF="index.html"\nACCESSKEY="H"\n>Home</A\n></TD\n><TD\n>'
    "Release Checklist</TD\n></TR\n></TABLE\n></DIV\n></BODY\n></HTML\n>\n"
)


def question_list(lines: list[str]) -> str:
    """The ``qandaset``'s generated list of every question: a ``<DL>`` of numbered links."""
    items = "".join(
        f'<DT\n>7.1.1.{n}. <A\nHREF="appendix.html#AEN{n}"\n>{t}</A\n></DT\n>'
        for n, t in enumerate(lines, 1)
    )
    return f"<DL\n><DT\n>1. Group</DT\n><DD\n><DL\n>{items}</DL\n></DD\n></DL\n>"


def group(title: str, entries: list[str]) -> str:
    """One ``qandadiv``: its ``<H3>`` title over its entries."""
    return (
        f'<A\nNAME="AEN{len(title)}"\n></A\n><DIV\nCLASS="QANDADIV"\n><H3\n><A\n'
        f'NAME="G{len(title)}"\n></A\n>{title}</H3\n>{"".join(entries)}</DIV\n>'
    )


def entry(number: str, question_html: str, answers: list[str]) -> str:
    """One ``qandaentry`` as the stylesheets write it: the question div (an anchor, the
    number in bold, then the question's own markup), then one answer div per answer, each
    opening with an empty bold label."""
    label = f"<B\n>{number}. </B\n>" if number else ""
    divs = "".join(f'<DIV\nCLASS="ANSWER"\n><P\n><B\n> </B\n>{a}</DIV\n>' for a in answers)
    return (
        f'<DIV\nCLASS="QANDAENTRY"\n><DIV\nCLASS="QUESTION"\n><P\n><A\nNAME="AEN{number}"\n>'
        f"</A\n>{label}{question_html}</DIV\n>{divs}</DIV\n>"
    )


def page(listed: list[str], groups: list[str]) -> str:
    return (
        HEAD + f'<DIV\nCLASS="QANDASET"\n>{question_list(listed)}{"".join(groups)}</DIV\n>' + FOOT
    )


Q_RUN = "How should I run slon processes?"
Q_NOTICE = (
    "I'm now the following notice in the logs: NOTICE: Slony-I: log switch to sl_log_2 still "
    "in progress - sl_log_1 not truncated Both sl_log_1 and sl_log_2 are continuing to grow. "
    "What's wrong?"
)
Q_PS = (
    "ps finds passwords on command line If I run a ps command, I, and everyone else, can see "
    "passwords on the command line."
)
Q_ORDER = "Is the ordering of tables in a set significant?"
Q_OID = "My application uses OID attributes; is it possible to replicate tables like this?"
FAQ = page(
    ["listline How should I run slon", "listline notice", "listline passwords"],
    [
        group(
            '1.  <SPAN\nCLASS="PRODUCTNAME"\n>Slony-I</SPAN\n> FAQ: How Do I?',
            [
                entry(
                    "7.1.1.1",
                    'How should I run <SPAN\nCLASS="APPLICATION"\n>slon</SPAN\n> processes?</P\n>',
                    [
                        'A <SPAN\nCLASS="APPLICATION"\n>slon</SPAN\n> process is required '
                        "for each database\nthat participates in replication.</P\n>",
                        "Run them under a\nwatchdog.</P\n>",
                    ],
                ),
                entry(
                    "7.1.1.2",
                    ' I\'m now the following notice in the\nlogs:</P\n><PRE\nCLASS="SCREEN"\n'
                    ">NOTICE:  Slony-I: log switch to sl_log_2 still in progress - sl_log_1 not "
                    'truncated</PRE\n><P\n> Both <TT\nCLASS="ENVAR"\n>sl_log_1</TT\n> and '
                    '<TT\nCLASS="ENVAR"\n>sl_log_2</TT\n> are\ncontinuing to grow.  What\'s '
                    "wrong? </P\n>",
                    [
                        ' Observe that it is indicated as a\n<SPAN\nCLASS="emphasis"\n><I\n'
                        'CLASS="EMPHASIS"\n>NOTICE</I\n></SPAN\n>, not as an error.</P\n>',
                    ],
                ),
                entry("7.1.1.3", "An entry whose answer holds no text.</P\n>", ["</P\n>"]),
            ],
        ),
        group(
            "2. Configuration Issues",
            [
                entry(
                    "7.1.2.1",
                    "ps finds passwords on command line</P\n><P\n> If I run a\n"
                    '<TT\nCLASS="COMMAND"\n>ps</TT\n> command, I, and everyone else, can '
                    "see passwords on the command line.</P\n>",
                    [
                        "Take the passwords out of the configuration, and put them into\n"
                        '<TT\nCLASS="FILENAME"\n>$(HOME)/.pgpass.</TT\n></P\n><PRE\n'
                        'CLASS="PROGRAMLISTING"\n>host:5432:db:slony:secret</PRE\n>',
                    ],
                ),
                entry(
                    "7.1.2.2",
                    Q_ORDER + "</P\n>",
                    [
                        " Most of the time, it isn't. Tables are\nlocked in order.</P\n><UL\n>"
                        "<LI\n><P\n>parents first</P\n></LI\n><LI\n><P\n>children after</P\n>"
                        "</LI\n></UL\n>",
                    ],
                ),
            ],
        ),
        group(
            "3. Anachronisms",
            [
                entry(
                    "7.1.3.1",
                    Q_OID + "</P\n>",
                    ["It is worth noting that oids have been deprecated for a long time.</P\n>"],
                ),
            ],
        ),
    ],
)
A_RUN = (
    "A slon process is required for each database that participates in replication.\n\n"
    " Run them under a watchdog."
)
A_NOTICE = "Observe that it is indicated as a NOTICE, not as an error."
A_PS = (
    "Take the passwords out of the configuration, and put them into $(HOME)/.pgpass.\n\n"
    "```\nhost:5432:db:slony:secret\n```"
)
A_ORDER = (
    "Most of the time, it isn't. Tables are locked in order.\n\n- parents first\n\n- children after"
)
A_OID = "It is worth noting that oids have been deprecated for a long time."
ASKED = (Q_RUN, Q_NOTICE, Q_PS, Q_ORDER, Q_OID)
ANSWERS = {
    "7.1.1.1": A_RUN,
    "7.1.1.2": A_NOTICE,
    "7.1.2.1": A_PS,
    "7.1.2.2": A_ORDER,
    "7.1.3.1": A_OID,
}


def test_split_slony_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_slony_faq(FAQ)
    # each question div asked, in order (its bold number out, its paragraphs and the log
    # excerpt as one line, spaces folded); the answer its answer divs, converted and joined;
    # the id the FAQ's number
    nsc.assert_split_answers(text, qa, ASKED, ANSWERS)
    # the generated list and the chapter's contents leave; the navigation leaves; the groups'
    # titles, the chapter and section headings stay; the unanswered entry's question stays
    assert "listline" not in text and "tocline" not in text
    assert "Prev" not in text and "Home" not in text and "Release Checklist" not in text
    assert "### 1. Slony-I FAQ: How Do I?" in text and "### 3. Anachronisms" in text
    assert text.startswith("# Chapter 7. Appendix\n\n# 7.1. Frequently Asked Questions\n")
    assert "An entry whose answer holds no text." in text
    assert "7.1.1.1" not in text and "7.1.2.1" not in text
    for _, _, a in qa:
        assert "Anachronisms" not in a and "Configuration Issues" not in a


def test_split_slony_faq_edges() -> None:
    # no qandaset: the page converted, nothing asked
    assert ns.split_slony_faq("<p>No entries here.</p>") == ("No entries here.\n", [])
    # a qandaset with no child div: all of it is the generated list; the text after it stays
    text, qa = ns.split_slony_faq('<div class="qandaset"><dl><dt>q?</dt></dl></div><p>After.</p>')
    assert (text, qa) == ("After.\n", [])
    # an entry without a number is numbered by its place; a repeated number is told apart;
    # lower-case tags and quotes read the same
    twice = (
        '<div class="qandaset"><dl><dt>list</dt></dl>'
        '<div class="qandaentry"><div class="question"><p><b>7.1.1.</b> One?</p></div>'
        '<div class="answer"><p>1 a.</p></div></div>'
        "<DIV CLASS='QANDAENTRY'><DIV CLASS='QUESTION'><P><B>7.1.1</B>Two?</P></DIV>"
        "<DIV CLASS='ANSWER'><P>2 b.</P></DIV></DIV>"
        '<div class="qandaentry"><div class="question"><p>Three?</p></div>'
        '<div class="answer"><p>3 c.</p></div></div></div>'
    )
    text, qa = ns.split_slony_faq(twice)
    assert qa == [("7.1.1", "One?", "1 a."), ("7.1.1-2", "Two?", "2 b."), ("3", "Three?", "3 c.")]
    assert text == "1 a.\n\n2 b.\n\n3 c.\n"
    # the number is the bold text ahead of any other text only: a bold number later in the
    # question is the question's own text, and the entry is numbered by its place
    late = (
        '<div class="qandaset"><div class="qandaentry"><div class="question"><p>Version '
        '<b>1.2</b> fails?</p></div><div class="answer"><p>Upgrade it.</p></div></div></div>'
    )
    assert ns.split_slony_faq(late)[1] == [("1", "Version 1.2 fails?", "Upgrade it.")]
    # a question with no answer div asks nothing and stays; an entry never closed (the
    # page's end) asks nothing either, and stays whole
    bare = (
        '<div class="qandaset"><div class="qandaentry"><div class="question"><p><b>1.</b> '
        'Q?</p></div></div><div class="qandaentry"><div class="question"><p>R?</p></div>'
        '<div class="answer"><p>Kept.</p></div>'
    )
    text, qa = ns.split_slony_faq(bare)
    assert qa == [] and text == "## 1. Q?\n\n## R?\n\nKept.\n"
    # a div nested in an answer (an admonition) is the answer's text, not a new entry
    nested = (
        '<div class="qandaset"><div class="qandaentry"><div class="question"><p>Q?</p></div>'
        '<div class="answer"><p>Before.</p><div class="warning"><p>Careful.</p></div>'
        "<p>After.</p></div></div></div><p>Tail.</p>"
    )
    text, qa = ns.split_slony_faq(nested)
    assert qa == [("1", "Q?", "Before.\n\nCareful.\n\nAfter.")]
    assert text == "Before.\n\nCareful.\n\nAfter.\n\nTail.\n"


_WORD = st.sampled_from(["slon", "slonik", "node", "set", "sync", "table", "origin"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=8),  # the question's words
            st.booleans(),  # the question shows a log excerpt in a <PRE>
            st.lists(st.lists(_WORD, min_size=0, max_size=6), min_size=0, max_size=3),  # answers
            st.integers(min_value=0, max_value=3),  # the number (0: none; repeats happen)
        ),
        min_size=1,
        max_size=7,
    ),
    st.integers(min_value=1, max_value=3),  # groups the entries fall into
)
def test_split_slony_faq_property(
    entries: list[tuple[list[str], bool, list[list[str]], int]], groups: int
) -> None:
    """Random entries over one to three groups (in order), some with a log excerpt in the
    question, some with no number, numbers repeating, zero to three answer divs (some
    empty): one question per entry whose answers hold text, in order, the number the id
    (``-2`` on a repeat; the place without one), the answer its answer divs joined, in the
    page; no question, log line, number or line of the generated list left in it (an entry
    asking nothing stays whole); every group title kept. The answer divs' paragraphs after
    the first keep the space the empty bold label leaves, as the converter writes it."""
    built: list[list[str]] = [[] for _ in range(groups)]
    expected = []
    seen: dict[str, int] = {}
    for n, (qwords, log, answers, number) in enumerate(entries):
        words = f"entry{n}x {' '.join(qwords)}"
        pre = (
            f'</P\n><PRE\nCLASS="SCREEN"\n>entry{n}x ERROR: {qwords[0]} failed</PRE\n>'
            if log
            else ""
        )
        asked = words + (f" entry{n}x ERROR: {qwords[0]} failed" if log else "")
        texts = [f"Answer{n} {' '.join(a)}." for a in answers if a]
        divs = [f"Answer{n} {' '.join(a)}.</P\n>" if a else "</P\n>" for a in answers]
        num = f"9.{number}" if number else ""
        built[n * groups // len(entries)].append(entry(num, f"{words}{pre}</P\n>", divs))
        if texts:
            key = num or str(n + 1)
            seen[key] = seen.get(key, 0) + 1
            expected.append(
                (key if seen[key] == 1 else f"{key}-{seen[key]}", asked, "\n\n ".join(texts))
            )
    listed = [f"listline{n}" for n in range(len(entries))]
    text, qa = ns.split_slony_faq(
        page(listed, [group(f"{g + 1}. grouptitle{g}", e) for g, e in enumerate(built)])
    )
    answered = [bool([a for a in e[2] if a]) for e in entries]
    assert [k for k, _, _ in qa] == [k for k, _, _ in expected]
    assert qa == expected
    for _, _, a in qa:
        assert a in text
    for n, has in enumerate(answered):
        assert (f"entry{n}x" in text) == (not has)
    assert "listline" not in text
    # a number leaves with its asked question; an entry that asks nothing keeps its own
    assert ("9." in text) == any(e[3] and not has for e, has in zip(entries, answered, strict=True))
    for g in range(groups):
        assert f"### {g + 1}. grouptitle{g}" in text


# -- the set, built from a package tree shaped like Debian's slony1-2-doc -------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.SLONY_PACKAGE, "2.2.11-1")
    doc: Path = root / ns.SLONY_DOC
    doc.mkdir(parents=True)
    (doc / ns.SLONY_FAQ).write_text(faq, encoding="latin-1")
    body = HEAD.split('<DIV\nCLASS="SECT1"', 1)[0].replace("Chapter 7. Appendix", "{}")
    (doc / "tutorial.html").write_text(
        body.format("Chapter 2. Tutorial")
        + f"<P\n>Users ask: {Q_ORDER} Tables are locked in order.</P\n>"
        + FOOT.split("</DIV\n>", 1)[1],
        encoding="latin-1",
    )
    (doc / "stmtsetdroptable.html").write_text(
        "<H2\n>SET DROP TABLE</H2\n><P\n>Drop a table from a replication set.</P\n>"
    )
    (doc / "function.slonyversion.html").write_text(
        "<H2\n>slonyversion()</H2\n><P\n>Returns the version number of the slon schema.</P\n>"
    )
    (doc / "bookindex.html").write_text(f"<P\n>indexline {Q_RUN}</P\n>")
    (doc / "oldtestbed.html").write_text("<P\n>" + "Test bed notes. " * 12_000 + "</P\n>")
    (doc / "stylesheet.css").write_text("body { leftout: 1 }\n")
    (doc / "README").write_text("leftout\n")
    (doc.parent / "README.Unicode").write_text("leftout\n")
    (doc.parent / "examples").mkdir()
    write_gz(doc.parent / "examples" / "SAMPLE.gz", "leftout\n")
    write_gz(doc.parent / "changelog.Debian.gz", "leftout\n")
    (doc.parent / "copyright").write_text("leftout\n")
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (:data:`FAQ`), the guide's folder."""
    return _package(tmp_path, monkeypatch)


def test_slony_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.slony_faq_set()
    assert nset.name == "slony-faq"
    assert [q.qid for q in nset.questions] == [f"slony-faq:{k}" for k in ANSWERS]
    assert set(nset.files) == {
        "appendix.md",
        "tutorial.md",
        "stmtsetdroptable.md",
        "function.slonyversion.md",
    }
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    assert {q.source for q in nset.questions} == {"appendix.md"}
    nsc.assert_files_as_written(nset)
    assert "2.2.11-1" in nset.note
    assert "over 150000 chars: oldtestbed.html" in nset.note
    nsc.assert_held_out("slony-faq")
    corpus = " ".join(nset.files.values())
    assert "leftout" not in corpus and "indexline" not in corpus and "listline" not in corpus
    # the page quoting a question scrubbed, its other text kept; the reference pages read
    assert "Tables are locked in order." in nset.files["tutorial.md"]
    # the other pages read as DocBook: navigation and tables of contents out, heading kept
    assert "Prev" not in corpus and "Home" not in corpus and "tocline" not in corpus
    assert nset.files["tutorial.md"].startswith("# Chapter 2. Tutorial\n")
    assert "Drop a table from a replication set." in nset.files["stmtsetdroptable.md"]
    assert "# slonyversion()" in nset.files["function.slonyversion.md"]
    assert nset.left_out == ()


def test_slony_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace("It is worth noting that oids have been deprecated for a long time.", "No.")
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.slony_faq_set(), Q_OID, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    # the FAQ page as a browser shows it (tags out, entities read, lines folded): the check
    # finds every question there, so it could fail
    shipped = {"appendix.txt": ns.xboard_heading_text(FAQ.replace("<B\n>7.1.", "<B\n>"))}
    nsc.assert_leak_checked(ns.slony_faq_set(), shipped, ASKED)


def test_slony_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    added = entry(
        "7.1.3.2",
        "I tried creating a CLUSTER NAME with a dash in it. That didn't work.</P\n>",
        ["Slony-I uses the same rules for unquoted identifiers as the main parser.</P\n>"],
    )
    more = FAQ.replace("</DIV\n></DIV\n>" + FOOT, added + "</DIV\n></DIV\n>" + FOOT)
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.slony_faq_set, lambda: (doc_dir / ns.SLONY_FAQ).write_text(more, encoding="latin-1")
    )


def test_slony_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.SLONY_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.slony_faq_set, ns.SLONY_FAQ)
