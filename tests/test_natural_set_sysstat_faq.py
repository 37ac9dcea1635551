"""The ``sysstat-faq`` natural-question set (``bench/natural_sets.py``), its reading of
sysstat's Markdown FAQ and the question-leak check (``bench/check_question_leaks.py``) on a
small inline FAQ shaped as Debian's ``sysstat`` ships it (``/usr/share/doc/sysstat/FAQ.md.gz``:
a title, a table of contents of group titles over one link line per question, some
shortened; a rule; ``### N. Group`` headings with ``<a name>`` anchors over ``N.M.<a
name="N_M"></a> <question>`` entries, two quoting an error message in a fenced block and so
worded the same up to it, one wrapped over a second line, one with code backticks and bold,
one with ``_emphasis_``; answers after an ``A:`` label with fenced commands holding lines
that look like a heading, a rule and a question, and a line wrapped to open with a version
"2.6.25 and later."; an entry that never reaches its ``A:``; the author's line after the last
rule) beside the READMEs, the example notes and the man pages (one over the limit) in a
package tree laid out as the package unpacks (marker present, nothing downloaded); offline,
no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
contents, a README quoting one); each answer is exactly the text under its ``A:`` up to the
next rule; ids are the author's numbers, so an entry added at the end keeps the halves; an
answer too short to judge leaves the set but not the corpus's scrubbing.
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

Q_MSGFMT = (
    "When I compile sysstat, it fails with the following message: "
    "make: msgfmt: Command not found make: ***[locales] Error 127"
)
Q_UNITS = "What are the units actually used by sar and iostat commands?"
Q_INVALID = (
    "The sar command complains with the following message: Invalid system activity file: ..."
)
Q_INCONSISTENT = "The sar command complains with the following message: Inconsistent input data"
Q_SOLARIS = "Are sar daily data files fully compatible with Sun Solaris format sar files?"
Q_PIDSTAT = "pidstat doesn't display statistics for process (task) xyz..."
ASKED = (Q_MSGFMT, Q_UNITS, Q_INVALID, Q_INCONSISTENT, Q_SOLARIS, Q_PIDSTAT)
A_MSGFMT = (
    "The **msgfmt** command belongs to the GNU gettext package.\n"
    "If you don't have it on your system, configure sysstat like this:\n"
    "```\n# ll /usr/src/linux/include/asm\n---\n"
    "1.9. not a question, a line of the output\n"
    "$ ./configure --disable-nls\n```\n"
    "then compile sysstat as usual (make ; make install)."
)
A_UNITS = (
    "Although sysstat commands use the abbreviations kB, MB, etc.\n"
    "we always actually refer to kibibytes (kiB), mebibytes (MiB),..."
)
A_INVALID = (
    "You are trying to use a file which is not a system activity file, or whose\n"
    "format is no longer compatible with that of files created by current sar version."
)
A_INCONSISTENT = (
    "This error message means that sadc (the system activity data collector that\n"
    "sar is using) is not consistent with the sar command.\n"
    "Extended statistics for partitions are available again with kernels\n"
    "2.6.25 and later."
)
A_SOLARIS = "No, the format of the binary data files created by sysstat's sar command is not."
A_PIDSTAT = (
    "This must be because pidstat only displays statistics for active tasks\n"
    "by default. Enter `pidstat -u -p ALL` to make sure that all\n"
    "the processes are listed in the report."
)
ANSWERS = {
    "1.1": A_MSGFMT,
    "1.2": A_UNITS,
    "2.1": A_INVALID,
    "2.2": A_INCONSISTENT,
    "2.3": A_SOLARIS,
    "4.3": A_PIDSTAT,
}

FAQ = (
    "## Welcome to the sysstat's Frequently Asked Questions!\n\n### Table of contents\n\n"
    "**[1. General questions](#general)**\n\n"
    "[1.1.](#1_1) When I compile sysstat, it fails with the following message: "
    "`make: msgfmt: Command not found`  \n"
    "[1.2.](#1_2) What are the units actually used by `sar` and **iostat** commands?  \n\n"
    "**[2. Questions related to sar, sadc and sadf](#sar)**\n\n"
    "[2.1.](#2_1) The sar command complains with the following message: "
    "`Invalid system activity file: ...`  \n"
    "[2.2.](#2_2) The sar command complains with the following message: "
    "`Inconsistent input data`  \n"
    "[2.3.](#2_3) Are sar daily data files fully compatible with Sun Solaris format sar "
    "files?  \n"
    "[2.4.](#2_4) Is this entry answered at all?  \n\n"
    "**[4. Questions related to pidstat](#pidstat)**\n\n"
    "[4.3.](#4_3) pidstat doesn't display statistics for process (task) _xyz_...  \n\n---\n\n"
    '### 1. General questions<a name="general"></a>\n\n'
    '1.1.<a name="1_1"></a> When I compile sysstat, it fails with the following message:\n'
    "```\nmake: msgfmt: Command not found\nmake: ***[locales] Error 127\n```\n"
    f"A: {A_MSGFMT}\n\n---\n"
    '1.2.<a name="1_2"></a> What are the units actually used by `sar` and **iostat** '
    "commands?\n\n\n"
    f"A: {A_UNITS}\n\n---\n\n"
    '### 2. Questions related to sar, sadc and sadf<a name="sar"></a>\n\n'
    '2.1.<a name="2_1"></a> The sar command complains with the following message:\n'
    "```\nInvalid system activity file: ...\n```\n"
    f"A: {A_INVALID}\n\n---\n"
    '2.2.<a name="2_2"></a> The sar command complains with the following message:\n'
    "```\nInconsistent input data\n```\n"
    f"A: {A_INCONSISTENT}\n\n---\n"
    '2.3.<a name="2_3"></a> Are sar daily data files fully compatible with Sun Solaris '
    "format\nsar files?\n  \n\n"
    f"A: {A_SOLARIS}\n\n---\n"
    '2.4.<a name="2_4"></a> Is this entry answered at all?\n\n---\n\n'
    '### 4. Questions related to pidstat<a name="pidstat"></a>\n\n'
    '4.3.<a name="4_3"></a> pidstat doesn\'t display statistics for process (task) _xyz_...\n\n\n'
    f"A: {A_PIDSTAT}\n\n---\n"
    "Sebastien Godard (sysstat at orange dot fr) is the author and the current\n"
    "maintainer of this package.\n"
)


def test_split_sysstat_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_sysstat_faq(FAQ)
    # every answered entry a question, its fenced message in it (the two sar entries told
    # apart only by it), wrapped lines joined, markup read; ids the author's numbers
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # the contents' link lines leave the page (one is shorter than its entry), their group
    # titles stay; the headings and the author's line stay, in no answer; anchors and
    # rules leave; the entry that never reaches its A: stays as text, asked nothing
    assert "(#1_1)" not in page and "**[1. General questions](#general)**" in page
    assert "### 2. Questions related to sar, sadc and sadf\n" in page
    assert page.endswith("is the author and the current\nmaintainer of this package.\n")
    assert "<a name" not in page and page.count("\n---\n") == 1  # the one in the fence
    assert "2.4. Is this entry answered at all?" not in page
    assert "Is this entry answered at all?" in page
    assert all("Godard" not in a and "### " not in a for *_, a in qa)


def test_split_sysstat_faq_edges() -> None:
    # no entry: the text kept, nothing asked; "N.M." without a space or anchor, or inside a
    # line, is text; a rule before A: leaves the entry unasked; the last answer runs to the
    # end; a repeated number "-2"
    page, none = ns.split_sysstat_faq("## Title\n\nText 1.2. inside.\n2.6.25 and later.\n")
    assert none == [] and page == "## Title\n\nText 1.2. inside.\n2.6.25 and later.\n"
    page, qa = ns.split_sysstat_faq(
        "1.1. One?\nA: First answer.\n---\n1.2. Unanswered?\n---\n"
        "1.1. Again?\nA: Second.\n2.6.25 and later.\n"
    )
    assert qa == [
        ("1.1", "One?", "First answer."),
        ("1.1-2", "Again?", "Second.\n2.6.25 and later."),
    ]
    assert page == "First answer.\n\nUnanswered?\n\nSecond.\n2.6.25 and later.\n"
    # inside a fence a question line, a rule and a heading are the answer's text
    page, qa = ns.split_sysstat_faq("1.1. Q?\nA: x\n```\n1.2. no\n---\n# no\n```\ny\n")
    assert qa == [("1.1", "Q?", "x\n```\n1.2. no\n---\n# no\n```\ny")]
    assert ns.sysstat_question(["Why `a` **b** _c_ d_e?", "```", "**raw** `x`", "```"]) == (
        "Why a b c d_e? **raw** `x`"
    )


_WORD = st.sampled_from(["sar", "sadc", "iostat", "pidstat", "disk", "cpu", "interval"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=10),  # the question's words
            st.lists(_WORD, min_size=0, max_size=3),  # a quoted message (none: no fence)
            st.booleans(),  # the question wrapped over a second line
            st.lists(_WORD, min_size=0, max_size=14),  # the answer's words (none: no A:)
        ),
        min_size=1,
        max_size=8,
    )
)
def test_split_sysstat_faq_property(
    entries: list[tuple[list[str], list[str], bool, list[str]]],
) -> None:
    """Random entries listed in the contents and asked after a rule, some quoting a message
    in a fence, some wrapped, some never reaching their A: line: one question per answered
    entry, in order, its number its id, its text with the message, its answer the text
    after A: up to the rule, in the page; no question's word left in it."""
    text = "## FAQ\n\n### Table of contents\n\n"
    for n, (qwords, _, _, _) in enumerate(entries, start=1):
        text += f"[1.{n}.](#1_{n}) entry{n}x {' '.join(qwords)}?  \n"
    text += '\n---\n\n### 1. Group<a name="g"></a>\n\n'
    expected = []
    for n, (qwords, message, wrapped, awords) in enumerate(entries, start=1):
        if wrapped and len(qwords) > 1:
            lines = [f"entry{n}x {qwords[0]}", " ".join(qwords[1:]) + "?"]
        else:
            lines = [f"entry{n}x {' '.join(qwords)}?"]
        text += f'1.{n}.<a name="1_{n}"></a> ' + "\n".join(lines) + "\n"
        question = " ".join(lines)
        if message:
            text += "```\n" + " ".join(message) + "\n```\n"
            question += " " + " ".join(message)
        answer = " ".join(["Answer", *awords]) if awords else ""
        if answer:
            text += f"A: {answer}\n"
            expected.append((f"1.{n}", question, answer))
        text += "\n---\n"
    page, qa = ns.split_sysstat_faq(text)
    assert qa == expected
    for _, _, a in qa:
        assert a in page
    asked = {k for k, _, _ in qa}
    for n in range(1, len(entries) + 1):
        # an answered entry's marker is gone; an unanswered one's stays, as text
        assert (f"entry{n}x" in page) == (f"1.{n}" not in asked)


# -- the set, built from a package tree shaped like Debian's sysstat --------------------------


def _man(name: str, body: str) -> str:
    return f'.TH {name.upper()} 1 "2024"\n.SH NAME\n{name} \\- a tool\n.SH DESCRIPTION\n{body}'


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.SYSSTAT_PACKAGE, "12.6.1-1")
    doc: Path = root / ns.SYSSTAT_DOC
    write_gz(doc / ns.SYSSTAT_FAQ, faq)
    write_gz(
        doc / "README.md.gz",
        f"# sysstat\n\nPerformance monitoring tools for Linux. Often asked: {Q_UNITS} "
        "See the FAQ.\n",
    )
    (doc / "README.Debian").write_text("The cron job is disabled by default.\n")
    (doc / "examples").mkdir()
    (doc / "examples/crontab").write_text(
        "# Run system activity accounting tool\n*/10 * * * * sa1\n"
    )
    (doc / "examples/README.irqstat").write_text("irqstat\n=======\n\nWatch /proc/interrupts.\n")
    (doc / "examples/sargraph").write_text("left out\n")
    (doc / "xml").mkdir()
    write_gz(doc / "xml/sysstat.xsd.gz", "left out\n")
    write_gz(doc / "CREDITS.gz", "left out\n")
    write_gz(doc / "NEWS.Debian.gz", "left out\n")
    write_gz(doc / "changelog.gz", "left out\n")
    (doc / "copyright").write_text("left out\n")
    write_gz(root / "usr/share/man/man1/iostat.1.gz", _man("iostat", "Reports I/O statistics.\n"))
    write_gz(root / "usr/share/man/man8/sadc.8.gz", _man("sadc", "Collects the data.\n"))
    write_gz(root / "usr/share/man/man1/sar.sysstat.1.gz", _man("sar", "Reports.\n" * 20_000))
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), its documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_sysstat_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.sysstat_faq_set()
    nsc.assert_package_set(
        nset,
        "sysstat-faq",
        ids=list(ANSWERS),
        files={
            "FAQ.md",
            "README.md",
            "README.Debian",
            "examples/crontab",
            "examples/README.irqstat",
            "man/iostat.1.md",
            "man/sadc.8.md",
        },
        source="FAQ.md",
        version="12.6.1-1",
        too_long="man/sar.sysstat.1.md",
        answers=ANSWERS,
    )
    assert "left out" not in " ".join(nset.files.values())
    # the README quoting a question scrubbed, its other text kept; the man page as text
    assert "See the FAQ." in nset.files["README.md"]
    assert "Reports I/O statistics." in nset.files["man/iostat.1.md"]


def test_sysstat_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(A_SOLARIS, "No.")
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.sysstat_faq_set(), Q_SOLARIS, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.sysstat_faq_set(), {"FAQ.md": FAQ}, ASKED)


def test_sysstat_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ + (
        '\n4.5.<a name="4_5"></a> How do I see the statistics of one thread?\n\n'
        "A: Call pidstat with option -t and the process's id after -p.\n\n---\n"
    )
    nsc.assert_halves_survive_an_added_question(
        ns.sysstat_faq_set, lambda: write_gz(doc / ns.SYSSTAT_FAQ, more)
    )


def test_sysstat_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.SYSSTAT_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.sysstat_faq_set, ns.SYSSTAT_FAQ)
