"""The ``chrony-faq`` natural-question set (``bench/natural_sets.py``), its FAQ reader and
the question-leak check (``bench/check_question_leaks.py``) on a small inline FAQ shaped like
Debian's ``chrony`` (``/usr/share/doc/chrony/FAQ.gz``: ``faq.adoc`` rendered as plain text:
the title, an indented ``Table of Contents`` listing every section and question, some entries
wrapped; column-0 sections ``N. <title>`` and questions ``N.M. <question>``, some wrapped over
a second column-0 line; a number at the head of an answer's wrapped line; a section with text
before its first question; the ``Last updated`` line at the end) in a package tree laid out as
the package unpacks (the FAQ, the READMEs, the configuration examples, the three man pages,
``NEWS`` and the changelogs to be left out; marker present, nothing downloaded); offline, no
embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the FAQ's own lines,
its contents list, a man page or a README quoting one); each answer is exactly the text under
its question up to the next question or section; a wrapped question is read whole; a number
at the head of a wrapped line is no section and no question; a question without an answer
asks nothing; ids are the authors' numbers; an answer too short to judge leaves the set but
not the corpus's scrubbing; the halves hold when an entry is added.
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

Q_NTPD = "How does chrony compare to ntpd?"
Q_SERVER = "How do I make an NTP server?"
Q_DNS = "Must I specify servers by IP address if DNS is not available on chronyd start?"
Q_LIMIT = "Why are client log records dropped before reaching clientloglimit?"
Q_FIREWALL = "Behind a firewall?"
Q_506 = "I keep getting the error 506 Cannot talk to daemon"
ASKED = (Q_NTPD, Q_SERVER, Q_DNS, Q_LIMIT, Q_FIREWALL, Q_506)

FAQ = """Frequently Asked Questions

Table of Contents

  o 1. chrony compared to other programs
      ? 1.1. How does chrony compare to ntpd?
  o 2. Configuration issues
      ? 2.1. How do I make an NTP server?
      ? 2.2. Must I specify servers by IP address if DNS is not available on
        chronyd start?
      ? 2.3. Why are client log records dropped before reaching
        clientloglimit?
      ? 2.4. Is this entry unanswered?
  o 3. Computer is not synchronising
      ? 3.1. Behind a firewall?
  o 4. Issues with chronyc
      ? 4.1. I keep getting the error 506 Cannot talk to daemon

1. chrony compared to other programs

1.1. How does chrony compare to ntpd?

chrony and ntpd are two different implementations of the Network Time Protocol
(NTP).

For a more detailed comparison of features and performance, see the comparison
page on the chrony website.

2. Configuration issues

2.1. How do I make an NTP server?

By default, chronyd does not operate as an NTP server. You need to add an allow
directive to the chrony.conf file.

allow 192.168.1.0/24

2.2. Must I specify servers by IP address if DNS is not available on chronyd
start?

No, chronyd will keep trying to resolve the names specified by the server,
pool, and peer directives in an increasing interval until it succeeds.

2.3. Why are client log records dropped before reaching clientloglimit?

The number of dropped client log records depends on the hash table. The
absolute maximum number of client records kept at the same time is
16777216.

  o the load on the external connection is less

2.4. Is this entry unanswered?

3. Computer is not synchronising

This is the most common problem. There are a number of reasons, see the
following questions.

3.1. Behind a firewall?

Check the Reach value printed by the chronyc's sources command. If it is zero,
it means chronyd did not get any valid responses from the NTP server.

4. Issues with chronyc

4.1. I keep getting the error 506 Cannot talk to daemon

Perhaps chronyd is not running. Try netstat -a and see if the UDP port
323. You need to amend the firewall configuration in this case.

Last updated 2022-08-29 15:04:33 +0200
"""
ANSWERS = {
    "1.1": (
        "chrony and ntpd are two different implementations of the Network Time Protocol\n"
        "(NTP).\n\n"
        "For a more detailed comparison of features and performance, see the comparison\n"
        "page on the chrony website."
    ),
    "2.1": (
        "By default, chronyd does not operate as an NTP server. You need to add an allow\n"
        "directive to the chrony.conf file.\n\nallow 192.168.1.0/24"
    ),
    "2.2": (
        "No, chronyd will keep trying to resolve the names specified by the server,\n"
        "pool, and peer directives in an increasing interval until it succeeds."
    ),
    "2.3": (
        # a number at the head of a wrapped line is text; an indented bullet is the answer's
        "The number of dropped client log records depends on the hash table. The\n"
        "absolute maximum number of client records kept at the same time is\n"
        "16777216.\n\n  o the load on the external connection is less"
    ),
    "3.1": (
        "Check the Reach value printed by the chronyc's sources command. If it is zero,\n"
        "it means chronyd did not get any valid responses from the NTP server."
    ),
    "4.1": (
        "Perhaps chronyd is not running. Try netstat -a and see if the UDP port\n"
        "323. You need to amend the firewall configuration in this case."
    ),
}


def test_split_chrony_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_chrony_faq(FAQ)
    # the wrapped question read whole
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # the contents list leaves the page, its wrapped entries included
    assert "Table of Contents" not in page and "clientloglimit?" not in page
    assert "  o 1. chrony compared" not in page and "chronyd start?" not in page
    # a question with nothing under it asks nothing and leaves the page all the same
    assert "unanswered" not in page
    # sections stay in the page, in no answer; a section's text before its first
    # question is no answer
    assert "\n\n3. Computer is not synchronising\n\n" in page
    assert "There are a number of reasons" in page
    assert all("number of reasons" not in a and "Configuration issues" not in a for *_, a in qa)
    # the title and the trailer are in the page, in no answer
    assert page.startswith("Frequently Asked Questions\n")
    assert page.rstrip().endswith("Last updated 2022-08-29 15:04:33 +0200")
    assert all("Last updated" not in a for _, _, a in qa)


def test_split_chrony_faq_numbers_repeats_and_no_questions() -> None:
    # a column-0 number that is not the open section's (or the next section's) is text
    _, stray = ns.split_chrony_faq(
        "1. First\n\n1.1. Asked here?\n\nAnswered here.\n\n"
        "3.2. Not this section's?\n\nStill the answer.\n\n5. Not the next section\n\nMore.\n"
    )
    assert stray == [
        (
            "1.1",
            "Asked here?",
            "Answered here.\n\n3.2. Not this section's?\n\nStill the answer.\n\n"
            "5. Not the next section\n\nMore.",
        )
    ]
    # a wrapped line starting with the next section's number is text, not a section
    _, wrapped = ns.split_chrony_faq(
        "1. S\n\n1.1. How many servers?\n\nThe minimum is\n2. Use three.\n\n"
        "2. Next\n\n2.1. And then?\n\nThen stop.\n"
    )
    assert wrapped == [
        ("1.1", "How many servers?", "The minimum is\n2. Use three."),
        ("2.1", "And then?", "Then stop."),
    ]
    # a question line with no blank line before it is the answer's text
    _, glued = ns.split_chrony_faq("1. First\n\n1.1. Asked?\n\nText\n1.2. glued on?\n")
    assert glued == [("1.1", "Asked?", "Text\n1.2. glued on?")]
    # a repeated number gets -2
    _, again = ns.split_chrony_faq("1. S\n\n1.1. One?\n\nA.\n\n1.1. Again?\n\nB.\n")
    assert again == [("1.1", "One?", "A."), ("1.1-2", "Again?", "B.")]
    page, none = ns.split_chrony_faq("Frequently Asked Questions\n\nSome prose, no entry.\n")
    assert none == [] and page == "Frequently Asked Questions\n\nSome prose, no entry.\n"


_WORD = st.sampled_from(["clock", "server", "drift", "offset", "chronyc", "rtc", "pool", "nts"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.lists(_WORD, min_size=1, max_size=12),  # the question's words
                st.lists(_WORD, min_size=0, max_size=20),  # the answer's words (may be none)
                st.integers(min_value=2, max_value=8),  # words on the question's first line
            ),
            max_size=4,
        ),
        max_size=4,
    ),
    st.booleans(),  # the contents list
)
def test_split_chrony_faq_property(
    sections: list[list[tuple[list[str], list[str], int]]], contents: bool
) -> None:
    """Random sections of random entries, some questions wrapped, some unanswered, with or
    without a contents list: one question per answered entry, in order, each answer its
    text, in the page, no question's word left in it, ids the entries' numbers."""
    toc: list[str] = ["Table of Contents", ""]
    lines: list[str] = []
    expected: list[tuple[str, str, str]] = []
    for s, entries in enumerate(sections, start=1):
        toc.append(f"  o {s}. Section {s}")
        lines += [f"{s}. Section {s}", ""]
        for k, (qwords, awords, cut) in enumerate(entries, start=1):
            words = [f"entry{s}x{k}", *qwords]
            question = " ".join(words) + "?"
            toc.append(f"      ? {s}.{k}. {question}")
            first, rest = words[:cut], words[cut:]
            lines.append(f"{s}.{k}. " + " ".join(first) + ("" if rest else "?"))
            if rest:
                lines.append(" ".join(rest) + "?")
            lines.append("")
            if awords:
                answer = " ".join(["Answer", *awords[:5]])
                if awords[5:]:
                    answer += "\n" + " ".join(awords[5:])
                lines += [answer, ""]
                expected.append((f"{s}.{k}", question, answer))
    text = "\n".join(["Frequently Asked Questions", "", *(toc if contents else []), "", *lines])
    page, qa = ns.split_chrony_faq(text)
    assert qa == expected
    for _, _, a in qa:
        assert a in page
    assert not re.search(r"entry\d+x\d+", page)


# -- the set, built from a package tree shaped like Debian's chrony ------------------------

CONF_5 = f""".TH "CHRONY.CONF" "5"
.SH "NAME"
chrony.conf \\- chronyd configuration file
.SH "DESCRIPTION"
.sp
The \\fBallow\\fP directive opens the NTP port. {Q_SERVER} Add an allow directive.
"""


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.CHRONY_PACKAGE, "4.3-2+deb12u3")
    doc: Path = root / ns.CHRONY_DOC
    write_gz(doc / ns.CHRONY_FAQ, faq)
    write_gz(doc / "README.gz", f"This is the README for chrony.\n{Q_NTPD} See the FAQ.\n")
    (doc / "README.Debian").write_text("chrony for Debian\n\nThe default pool is Debian's.\n")
    for skipped in ("NEWS.gz", "NEWS.Debian.gz", "changelog.gz", "changelog.Debian.gz"):
        write_gz(doc / skipped, "left out\n")
    (doc / "copyright").write_text("left out\n")
    (doc / "examples").mkdir()
    (doc / "examples/chrony.conf.example1").write_text("pool pool.ntp.org iburst\n")
    (doc / "examples/chrony.conf.example3").write_text("# Allow NTP clients\n! allow all\n")
    write_gz(root / "usr/share/man/man5/chrony.conf.5.gz", CONF_5)
    write_gz(
        root / "usr/share/man/man1/chronyc.1.gz",
        '.TH "CHRONYC" "1"\n.SH "NAME"\nchronyc \\- command\\-line interface for chrony\n',
    )
    write_gz(
        root / "usr/share/man/man8/chronyd.8.gz",
        '.TH "CHRONYD" "8"\n.SH "NAME"\nchronyd \\- chrony daemon\n',
    )
    return doc


def test_chrony_faq_set_from_a_package_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.chrony_faq_set()
    assert [q.qid for q in nset.questions] == [f"chrony-faq:{k}" for k in ANSWERS]
    assert nset.left_out == ()
    assert set(nset.files) == {
        "FAQ",
        "README",
        "README.Debian",
        "examples/chrony.conf.example1",
        "examples/chrony.conf.example3",
        "man/chrony.conf.5.md",
        "man/chronyc.1.md",
        "man/chronyd.8.md",
    }
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    # a man page and the README quoting a question: scrubbed, their other text kept
    assert "Add an allow directive." in nset.files["man/chrony.conf.5.md"]
    assert "See the FAQ." in nset.files["README"]
    assert "! allow all" in nset.files["examples/chrony.conf.example3"]
    nsc.assert_files_as_written(nset)
    assert "4.3-2+deb12u3" in nset.note
    assert (
        "README, README.Debian, examples/chrony.conf.example1, examples/chrony.conf.example3, "
        "chrony.conf.5, chronyc.1, chronyd.8" in nset.note
    )
    nsc.assert_held_out("chrony-faq")


def test_chrony_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faq = FAQ.replace(
        "No, chronyd will keep trying to resolve the names specified by the server,\n"
        "pool, and peer directives in an increasing interval until it succeeds.\n",
        "No, it retries.\n",
    )
    _package(tmp_path, monkeypatch, faq)
    nset = ns.chrony_faq_set()
    nsc.assert_left_out(nset, Q_DNS, len(ASKED) - 1)  # scrubbed all the same


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy, and finds every question in the FAQ as
    shipped (the contents list's and the body's wrapped ones included: it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.chrony_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert sorted(asked) == sorted(ASKED)
    assert cql.find_leaks(nset.files, asked, False) == []
    shipped = cql.find_leaks({"FAQ": FAQ}, asked, False)
    assert {lk.question for lk in shipped if lk.kind == "exact"} == set(ASKED)


def test_chrony_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.chrony_faq_set)
    more = FAQ.replace(
        "2.4. Is this entry unanswered?\n",
        "2.4. Is this entry unanswered?\n\n2.5. How do I serve time to a LAN?\n\n"
        "Add a local directive to the server's chrony.conf file.\n",
    )
    write_gz(doc / ns.CHRONY_FAQ, more)
    nsc.assert_halves_kept(ns.chrony_faq_set, first, dev, test)


def test_chrony_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.CHRONY_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=re.escape("no FAQ.gz under")):
        ns.chrony_faq_set()
