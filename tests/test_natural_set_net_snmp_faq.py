"""The ``net-snmp-faq`` natural-question set (``bench/natural_sets.py``), its reading of
Net-SNMP's plain-text FAQ and the question-leak check (``bench/check_question_leaks.py``) on
a small inline FAQ shaped as Debian's ``libsnmp-base`` ships it (``FAQ.gz``: a centred title
over an indented rule, the authors' lines, a ``TABLE OF CONTENTS`` section underlined by
``=`` repeating every section and question, some in other words, then sections in capitals
underlined by ``=`` over questions underlined by ``-``; two questions sharing one answer, a
problem report that asks without a "?", an answer quoting another question, a table whose
header is underlined inside an answer, a question with nothing under it before the next
section) beside the READMEs and the man pages, one over the limit, in a package tree laid
out as the package unpacks (marker present, nothing downloaded); offline, no embedding
model, no test reads the real package.

What the set's numbers rest on: no question and no contents line is left in any file; the
FAQ is cut at its sections and each answer is exactly the text after its question up to the
next heading, in its section's page; the section titles stay, in no answer; ids are the
questions' slugs, so an entry added keeps the halves; an answer too short to judge leaves
the set but not the corpus's scrubbing.
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

Q_WHAT = "What is it?"
Q_V123 = "What's the difference between SNMPv1, SNMPv2 and SNMPv3?"
Q_V2C = "What's the difference between SNMPv2 and SNMPv2c?"
Q_RESPOND = "Why doesn't the agent respond?"
Q_UPTIME = "The system uptime (sysUpTime) returned is wrong!"
Q_WHICH = "Which extension mechanism should I use?"
Q_PERL = "What is the purpose of the Perl SNMP module?"
GENERAL = "FAQ/01-general.txt"
AGENT = "FAQ/02-agent.txt"
PERL = "FAQ/03-perl.txt"
FAQ = """
      Frequently Asked Questions (FAQ) for the UCD/Net-SNMP package
      =============================================================
\t\t       FAQ Author: Dave Shield
\t\t\tNet-SNMP Version: 5.9.3

TABLE OF CONTENTS
=================

 TABLE OF CONTENTS
 GENERAL
   What is it?
   What's the difference between SNMPv1, SNMPv2 and SNMPv3?
   What's the difference between SNMPv2 and SNMPv2c?
 AGENT
   Why doesn't the agent respond?
   The system uptime (sysUpTime) returned is wrong!
   Which should I use?
 PERL
   Where can I get the Perl SNMP package?


GENERAL
=======

What is it?
----------

  - Various tools relating to the Simple Network Management Protocol
    including:

\t* An extensible agent
\t* An SNMP library



What's the difference between SNMPv1, SNMPv2 and SNMPv3?
-------------------------------------------------------
What's the difference between SNMPv2 and SNMPv2c?
------------------------------------------------

  A full description is probably beyond the scope of this FAQ.
  Very briefly, the original protocol was described in RFCs 1155-1157.

    SNMPv2c uses the community-based admin framework of SNMPv1.



AGENT
=====

Why doesn't the agent respond?
-----------------------------

  Check the access control settings in snmpd.conf:

      Setting     Meaning
      -------     -------
      rocommunity read-only access

  and that no firewall blocks UDP port 161.



The system uptime (sysUpTime) returned is wrong!
-----------------------------------------------

  sysUpTime counts the time since the agent started, not the host.
  See the entry "Why doesn't the agent respond?" for access problems.



Which extension mechanism should I use?
--------------------------------------
PERL
====

What is the purpose of the Perl SNMP module?
--------------------------------------------

  It gives Perl programs the SNMP library's calls, so a script can
  query an agent without running the command-line tools.
"""
A_WHAT = (
    "- Various tools relating to the Simple Network Management Protocol\n    including:\n\n"
    "\t* An extensible agent\n\t* An SNMP library"
)
A_V2 = (
    "A full description is probably beyond the scope of this FAQ.\n"
    "  Very briefly, the original protocol was described in RFCs 1155-1157.\n\n"
    "    SNMPv2c uses the community-based admin framework of SNMPv1."
)
A_RESPOND = (
    "Check the access control settings in snmpd.conf:\n\n"
    "      Setting     Meaning\n      -------     -------\n"
    "      rocommunity read-only access\n\n  and that no firewall blocks UDP port 161."
)
A_UPTIME = (
    "sysUpTime counts the time since the agent started, not the host.\n"
    '  See the entry "Why doesn\'t the agent respond?" for access problems.'
)
A_PERL = (
    "It gives Perl programs the SNMP library's calls, so a script can\n"
    "  query an agent without running the command-line tools."
)
ASKED = (Q_WHAT, Q_V123, Q_V2C, Q_RESPOND, Q_UPTIME, Q_PERL)
IDS = (
    "what-is-it",
    "what-s-the-difference-between-snmpv1-snm",
    "what-s-the-difference-between-snmpv2-and",
    "why-doesn-t-the-agent-respond",
    "the-system-uptime-sysuptime-returned-is-",
    "what-is-the-purpose-of-the-perl-snmp-mod",
)
ANSWERS = dict(zip(IDS, (A_WHAT, A_V2, A_V2, A_RESPOND, A_UPTIME, A_PERL), strict=True))
SOURCES = [GENERAL, GENERAL, GENERAL, AGENT, AGENT, PERL]


def test_split_net_snmp_faq_pages_questions_and_answers() -> None:
    pages, qa = ns.split_net_snmp_faq(FAQ)
    # one page per section, in order; the title and authors open the first
    assert list(pages) == [GENERAL, AGENT, PERL]
    assert pages[GENERAL].startswith("Frequently Asked Questions (FAQ) for the UCD/Net-SNMP")
    assert "FAQ Author: Dave Shield" in pages[GENERAL]
    # each underlined question asked, in order (two underlined one after the other share
    # the answer under them; a problem report without "?" asks); the answer the text after
    # its rule up to the next heading, lines as written (a rule under an indented table
    # header is text); the source its section's page; the id its slug
    assert [q for _, q, _, _ in qa] == list(ASKED)
    assert [k for k, _, _, _ in qa] == list(IDS)
    assert {k: a for k, _, a, _ in qa} == ANSWERS
    assert [w for _, _, _, w in qa] == SOURCES
    for _, _, a, where in qa:
        assert a in pages[where]
    # the contents leave (every line of it: the questions in other words too); the section
    # titles stay with their rules, in no answer; the question with nothing under it stays
    text = "\n".join(pages.values())
    assert "TABLE OF CONTENTS" not in text and "Which should I use?" not in text
    assert "Where can I get the Perl SNMP package?" not in text
    assert "GENERAL\n=======" in pages[GENERAL] and "AGENT\n=====" in pages[AGENT]
    assert "PERL\n====" in pages[PERL]
    assert f"{Q_WHICH}\n--------------------------------------" in pages[AGENT]
    for _, _, a, _ in qa:
        assert "AGENT" not in a and "=====" not in a and Q_WHICH not in a
    for q in (Q_WHAT, Q_V123, Q_V2C, Q_PERL):
        assert q not in text
    # a question quoted inside another answer stays there (the set's scrubbing takes it)
    assert text.count(Q_RESPOND) == 1 and text.count(Q_UPTIME) == 0


def test_split_net_snmp_faq_edges() -> None:
    # no heading: one page of the text, nothing asked; a question before any section asks,
    # its source the first page; a rule under a blank or indented line, or at the top, is
    # text; a repeated question is told apart; a question with only blank lines under it
    # before the end asks nothing and stays; a section title with "contents" in any case
    # drops its section only; a single "=" under a line is text
    pages, qa = ns.split_net_snmp_faq("Just text.\n")
    assert qa == [] and pages == {"FAQ/01-faq.txt": "Just text.\n"}
    pages, qa = ns.split_net_snmp_faq("Early?\n------\n  Yes, early.\n\nMISC\n====\n  More.\n")
    assert qa == [("early", "Early?", "Yes, early.", "FAQ/01-misc.txt")]
    assert "More." in pages["FAQ/01-misc.txt"]
    ruled = "----\nA\n===\n\n-----\n  indented\n  --------\n  indented too\n-------\n  Text.\n"
    pages, qa = ns.split_net_snmp_faq(ruled)
    assert qa == [] and "-----\n  indented\n  --------" in pages["FAQ/01-a.txt"]
    assert "  indented too\n-------\n  Text." in pages["FAQ/01-a.txt"]
    assert ns.split_net_snmp_faq("  Indented\n========\n  Body.\n")[0] == {
        "FAQ/01-faq.txt": "Indented\n========\n  Body.\n"
    }
    twice = "S\n===\nSame?\n---\n  One.\nSame?\n---\n  Two.\n"
    assert ns.split_net_snmp_faq(twice)[1] == [
        ("same", "Same?", "One.", "FAQ/01-s.txt"),
        ("same-2", "Same?", "Two.", "FAQ/01-s.txt"),
    ]
    pages, qa = ns.split_net_snmp_faq("S\n===\nLast?\n-----\n\n\n")
    assert qa == [] and "Last?\n-----" in pages["FAQ/01-s.txt"]
    toc = "Contents of this file\n=====\n  Gone?\nX\n===\n  Kept.\n"
    pages, qa = ns.split_net_snmp_faq(toc)
    assert list(pages) == ["FAQ/01-x.txt"] and "Gone?" not in pages["FAQ/01-x.txt"]
    assert list(ns.split_net_snmp_faq("Intro\n=\nText.\n")[0]) == ["FAQ/01-faq.txt"]


_WORD = st.sampled_from(["agent", "mib", "trap", "snmpd", "walk", "oid", "perl"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),  # a new section before the entry
            st.lists(_WORD, min_size=1, max_size=8),  # the question's words
            st.integers(min_value=0, max_value=2),  # blank lines between rule and answer
            st.lists(_WORD, min_size=0, max_size=10),  # the answer's words (none: shares on)
        ),
        min_size=1,
        max_size=7,
    ),
    st.booleans(),  # the table of contents before the first section
)
def test_split_net_snmp_faq_property(
    entries: list[tuple[bool, list[str], int, list[str]]], contents: bool
) -> None:
    """Random entries, some opening a section, some with no answer (so they share the next
    question's answer, or, before a section or the end, ask nothing): each answered question
    asked once, in order, its slug the id (repeats ``-2``), its section's page the source,
    the answer the text after it in that page; no asked question and no contents line left;
    section titles and unanswered questions kept, in no answer."""
    text = "      The FAQ\n      =======\n\n"
    if contents:
        text += "TABLE OF CONTENTS\n=================\n\n"
        for n, (_, words, *_rest) in enumerate(entries):
            text += f"   contentsline{n} {' '.join(words)}\n"
        text += "\n\n"
    text += "FIRST\n=====\n\n"
    expected: list[tuple[str, str, str, str]] = []
    seen: dict[str, int] = {}
    waiting: list[str] = []  # questions with no answer yet
    page = "FAQ/01-first.txt"
    n_pages = 1
    kept: list[str] = []  # questions that must stay
    for n, (section, qwords, blanks, awords) in enumerate(entries):
        if section:
            kept += waiting
            waiting = []
            n_pages += 1
            page = f"FAQ/{n_pages:02d}-section{n}.txt"
            text += f"SECTION{n}\n========\n\n"
        question = " ".join([f"entry{n}x", *qwords]) + "?"
        text += f"{question}\n{'-' * len(question)}\n" + "\n" * blanks
        waiting.append(question)
        if awords:
            answer = " ".join(["Answer", *awords]) + "."
            text += f"  {answer}\n\n\n"
            for q in waiting:
                slug = ns._slug(q)
                seen[slug] = seen.get(slug, 0) + 1
                key = slug if seen[slug] == 1 else f"{slug}-{seen[slug]}"
                expected.append((key, q, answer, page))
            waiting = []
    kept += waiting
    pages, qa = ns.split_net_snmp_faq(text)
    assert qa == expected
    all_text = "\n".join(pages.values())
    for _, q, a, where in qa:
        assert a in pages[where]
        assert q not in all_text
    for q in kept:
        assert q in all_text
    for n, e in enumerate(entries):
        if e[0]:
            assert all_text.count(f"SECTION{n}\n========") == 1
    assert "contentsline" not in all_text and "TABLE OF CONTENTS" not in all_text
    assert "The FAQ" in pages["FAQ/01-first.txt"]


# -- the set, built from a package tree shaped like Debian's libsnmp-base -------------------


def _man(name: str, body: str) -> str:
    return f'.TH {name.upper()} 5 "2022"\n.SH NAME\n{name} \\- a file\n.SH DESCRIPTION\n{body}'


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.NETSNMP_PACKAGE, "5.9.3+dfsg-2+deb12u1")
    doc: Path = root / ns.NETSNMP_DOC
    write_gz(doc / ns.NETSNMP_FAQ, faq)
    write_gz(
        doc / "README.gz",
        "README file for net-snmp\n\n"
        f"  Frequently Asked Questions: {Q_UPTIME} and others are in the FAQ.\n",
    )
    (doc / "README.mibs").write_text("Where the MIB files go.\n")
    (doc / "README.snmpv3").write_text("How to create SNMPv3 users.\n")
    write_gz(doc / "README.thread.gz", "The library is not thread safe.\n")
    write_gz(doc / "NEWS.gz", "left out\n")
    write_gz(doc / "changelog.gz", "left out\n")
    (doc / "copyright").write_text("left out\n")
    etc = root / "etc/snmp/snmp.conf"
    etc.parent.mkdir(parents=True)
    etc.write_text("# left out\n")
    man5 = root / "usr/share/man/man5"
    write_gz(man5 / "snmp.conf.5.gz", _man("snmp.conf", "Settings for the tools.\n"))
    write_gz(man5 / "snmpd.examples.5.gz", _man("snmpd.examples", "Example agent setups.\n"))
    write_gz(man5 / "variables.5.gz", _man("variables", "An OID. " * 20_000 + "\n"))
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), the documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_net_snmp_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.net_snmp_faq_set()
    assert nset.name == "net-snmp-faq"
    assert [q.qid for q in nset.questions] == [f"net-snmp-faq:{k}" for k in IDS]
    assert [q.source for q in nset.questions] == SOURCES
    assert set(nset.files) == {
        GENERAL,
        AGENT,
        PERL,
        "README",
        "README.mibs",
        "README.snmpv3",
        "README.thread",
        "man/snmp.conf.5.md",
        "man/snmpd.examples.5.md",
    }
    # the answer quoting another question is scrubbed of it like every file
    scrubbed = dict(ANSWERS)
    scrubbed[IDS[4]] = A_UPTIME.replace(Q_RESPOND, "")
    nsc.assert_questions_out_answers_in(nset, scrubbed)
    nsc.assert_files_as_written(nset)
    assert "5.9.3+dfsg-2+deb12u1" in nset.note
    assert "over 150000 chars: man/variables.5.md" in nset.note
    nsc.assert_held_out("net-snmp-faq")
    text = " ".join(nset.files.values())
    assert "left out" not in text
    # the README quoting a question scrubbed, its other text kept; the notes as text
    assert "and others are in the FAQ." in nset.files["README"]
    assert Q_UPTIME not in text
    assert "Where the MIB files go." in nset.files["README.mibs"]
    assert "not thread safe" in nset.files["README.thread"]
    assert "Example agent setups." in nset.files["man/snmpd.examples.5.md"]
    assert nset.left_out == ()


def test_net_snmp_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(A_PERL, "Perl calls.")
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.net_snmp_faq_set(), Q_PERL, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    nsc.assert_leak_checked(ns.net_snmp_faq_set(), {"FAQ": FAQ}, ASKED)


def test_net_snmp_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    more = FAQ.replace(
        "AGENT\n=====\n",
        "How do I send traps and notifications?\n--------------------------------------\n\n"
        "  Use the snmptrap command with the trap's OID and its varbinds.\n\n"
        "AGENT\n=====\n",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.net_snmp_faq_set, lambda: write_gz(doc_dir / ns.NETSNMP_FAQ, more)
    )


def test_net_snmp_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.NETSNMP_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.net_snmp_faq_set, ns.NETSNMP_FAQ)
