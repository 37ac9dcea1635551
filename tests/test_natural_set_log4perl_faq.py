"""The ``log4perl-faq`` natural-question set (``bench/natural_sets.py``): Log4perl's FAQ as
Debian's ``liblog-log4perl-perl`` ships it (``usr/share/perl5/Log/``: ``Log4perl.pm`` and the
``Log4perl/`` modules, each Perl code with its POD inside; the FAQ the POD-only module
``Log4perl/FAQ.pm``), read by the cython-faq rule unchanged (``split_markdown_faq`` through
perlfaq's POD reader ``pod_to_markdown``: ``split_pod_faq``), on a small inline package tree
of that shape (code before ``__END__``, ``=encoding``, ``=head1`` NAME / DESCRIPTION / SEE
ALSO around ``=head2`` entries, ``C<>`` / ``L<>`` / ``B<>`` marks in titles, verbatim
paragraphs holding ``#`` comment lines, a stated problem, a "statement! question?" title, an
answer too short to judge, a module whose POD quotes a question, one over the page limit, the
examples folder and the copyright); offline, no embedding model, no test reads the real
package.

What the set's numbers rest on: a POD ``=head2`` title is read as a heading (without the
POD reader no entry asks and every question stays in the corpus); titles ending with "?"
that have their own text ask, the stated problems and the ``=head1`` sections stay; each
answer is exactly the text under its title, code paragraphs fenced; the modules' Perl code
never reaches the corpus; no question is left in any file; the halves are fixed.
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
from debian_package_double import unpacked_package

VERSION = "1.57-1"

Q_EASY = "What's the easiest way to use Log4perl?"
Q_DUPE = "I keep getting duplicate log messages! What's wrong?"
Q_LWP = "How can I hook up the LWP library with Log::Log4perl?"
Q_LOGS = "Where should I put my logfiles?"
Q_SHORT = "Can I use Log::Log4perl with log4j's Chainsaw?"
ASKED = [Q_EASY, Q_DUPE, Q_LWP, Q_LOGS]
STATED = "Log4perl doesn't interpret my backslashes correctly!"
A_EASY = (
    "If you just want to get all the comfort of logging, without much overhead, use "
    "Stealth Loggers.\n\n```\n    use Log::Log4perl qw(:easy);\n"
    '    # a comment, not a heading\n    DEBUG "Starting up";\n```'
)
A_DUPE = (
    "Loggers inherit their parents' appenders: set additivity to false, see Appenders in "
    "Log::Log4perl."
)
A_LWP = "Use the `LWP::Debug` hooks and funnel them to a logger of your choice, as shown."
A_LOGS = "Your log files should go where your operating system keeps its logs, /var/log."

FAQ = (
    "package Log::Log4perl::FAQ;\n\n# This is a comment, not POD\n1;\n\n__END__\n\n"
    "=encoding utf8\n\n"
    "=head1 NAME\n\nLog::Log4perl::FAQ - Frequently Asked Questions on Log::Log4perl\n\n"
    "=head1 DESCRIPTION\n\nThis FAQ shows a wide variety of commonly encountered logging "
    "tasks.\n\n"
    "=head2 What's the easiest way to use Log4perl?\n\n"
    "If you just want to get all the comfort of logging, without much\noverhead, use "
    "I<Stealth Loggers>.\n\n"
    '    use Log::Log4perl qw(:easy);\n    # a comment, not a heading\n    DEBUG "Starting up";'
    "\n\n"
    "=head2 I keep getting duplicate log messages! What's wrong?\n\n"
    "Loggers inherit their parents' appenders: set additivity to B<false>,\n"
    'see L<Log::Log4perl/"Appenders">.\n\n'
    "=head2 Log4perl doesn't interpret my backslashes correctly!\n\n"
    "Escape them twice in the configuration file.\n\n"
    "=head2 How can I hook up the LWP library with L<Log::Log4perl>?\n\n"
    "Use the C<LWP::Debug> hooks and funnel them to a logger of your choice, as shown.\n\n"
    "=head2 Can I use Log::Log4perl with log4j's Chainsaw?\n\nYes.\n\n"
    "=head2 Where should I put my logfiles?\n\n"
    "Your log files should go where your operating system keeps its logs, /var/log.\n\n"
    "=head1 SEE ALSO\n\nLog::Log4perl\n\n=cut\n"
)
MAIN = (
    "package Log::Log4perl;\n\nuse strict;\nsub leftout_code { 1 }\n\n"
    "=head1 NAME\n\nLog::Log4perl - Log4j implementation for Perl\n\n"
    f"=head1 DESCRIPTION\n\nPeople ask: {Q_LOGS} The answer is elsewhere.\n\n"
    "=head2 Appenders\n\nAn appender writes the messages somewhere.\n\n"
    "=cut\n\nsub leftout_more_code {\n    return 2;\n}\n\n1;\n"
)
SHIPPED = {"Log4perl/FAQ.pm": FAQ}
FILES = {"Log4perl/FAQ.md", "Log4perl.md", "Log4perl/Appender/File.md"}


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    """The library's folder as shipped: the FAQ module, the main module quoting a question,
    an appender, a module over the page limit; the examples folder, the man pages and the
    copyright elsewhere in the package."""
    root = unpacked_package(tmp_path, monkeypatch, ns.LOG4PERL_PACKAGE, VERSION)
    doc = root / ns.LOG4PERL_DOC
    (doc / "Log4perl/Appender").mkdir(parents=True)
    (doc / "Log4perl/FAQ.pm").write_text(faq, encoding="utf-8")
    (doc / "Log4perl.pm").write_text(MAIN, encoding="utf-8")
    (doc / "Log4perl/Appender/File.pm").write_text(
        "package Log::Log4perl::Appender::File;\n\nsub leftout { }\n\n1;\n\n__END__\n\n"
        "=head1 NAME\n\nLog::Log4perl::Appender::File - Log to file\n\n"
        "=head1 OPTIONS\n\n=over 4\n\n=item mode\n\nAppend or clobber.\n\n=back\n",
        encoding="utf-8",
    )
    (doc / "Log4perl/Huge.pm").write_text(
        "=head1 NAME\n\nHuge\n\n" + "Words. " * 30_000 + "\n", encoding="utf-8"
    )
    share = root / "usr/share/doc/liblog-log4perl-perl"
    (share / "examples").mkdir(parents=True)
    (share / "examples/syslog.pl").write_text("# leftout example\n", encoding="utf-8")
    (share / "copyright").write_text("leftout\n", encoding="utf-8")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _package(tmp_path, monkeypatch)


def test_log4perl_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.log4perl_faq_set()
    nsc.assert_package_set(
        nset,
        "log4perl-faq",
        ids=[ns._slug(q) for q in ASKED],
        files=FILES,
        source="Log4perl/FAQ.md",
        version=VERSION,
        too_long="Log4perl/Huge.pm",
    )
    # POD marks off the titles as a reader types them (C<>, L<> read as their text)
    assert [q.text for q in nset.questions] == ASKED
    assert [q.answers[0][0] for q in nset.questions] == [A_EASY, A_DUPE, A_LWP, A_LOGS]
    faq = nset.files["Log4perl/FAQ.md"]
    # the code before __END__ and the POD commands gone; =head1 sections and the stated
    # problem stay with their text
    assert "package Log::Log4perl::FAQ" not in faq and "=encoding" not in faq
    assert faq.startswith("# NAME\n\nLog::Log4perl::FAQ - Frequently Asked Questions")
    assert f"## {STATED}\n\nEscape them twice" in faq
    assert "# SEE ALSO\n\nLog::Log4perl" in faq
    # a module quoting a question: scrubbed, its other text and headings kept; its code out
    main = nset.files["Log4perl.md"]
    assert "People ask:" in main and "The answer is elsewhere." in main
    assert "## Appenders\n\nAn appender writes" in main and Q_LOGS not in main
    assert "- mode\n\nAppend or clobber." in nset.files["Log4perl/Appender/File.md"]
    assert "leftout" not in " ".join(nset.files.values())  # code, examples, copyright
    # the short answer left out and named (its question still scrubbed)
    nsc.assert_left_out(nset, Q_SHORT, len(ASKED))


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.log4perl_faq_set(), SHIPPED, [*ASKED, Q_SHORT])


def test_log4perl_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "=head1 SEE ALSO",
        "=head2 Can I log to syslog?\n\nYes, through the Log::Dispatch::Syslog appender.\n\n"
        "=head1 SEE ALSO",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.log4perl_faq_set,
        lambda: (doc / "Log4perl/FAQ.pm").write_text(more, encoding="utf-8"),
    )


def test_log4perl_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / "Log4perl/FAQ.pm").unlink()
    nsc.assert_refuses_without_faq(ns.log4perl_faq_set, "Log4perl/FAQ.pm")


def test_split_pod_faq_reads_pod_headings() -> None:
    """The POD reader is what makes an entry ask: over the raw POD (the markdown splitter
    alone) no ``=head2`` is a heading and nothing is asked."""
    assert ns.split_markdown_faq(FAQ)[1] == []
    page, qa = ns.split_pod_faq(FAQ)
    nsc.assert_split_answers(
        page,
        qa,
        [*ASKED[:3], Q_SHORT, Q_LOGS],
        {
            ns._slug(Q_EASY): A_EASY,
            ns._slug(Q_DUPE): A_DUPE,
            ns._slug(Q_LWP): A_LWP,
            ns._slug(Q_SHORT): "Yes.",
            ns._slug(Q_LOGS): A_LOGS,
        },
    )
    assert ns.POD_DOCS.suffix == ".pm" and ns.POD_DOCS.split is ns.split_pod_faq


_WORD = st.sampled_from(["logger", "appender", "layout", "level", "category", "file"])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 4),  # the =headN level
            st.booleans(),  # ends with "?"
            st.lists(_WORD, min_size=0, max_size=4),  # its own text (empty: none)
            st.booleans(),  # the text followed by a verbatim paragraph with a "#" line
            st.booleans(),  # then Perl code after =cut, up to the next command
        ),
        min_size=1,
        max_size=9,
    )
)
def test_split_pod_faq_property(
    entries: list[tuple[int, bool, list[str], bool, bool]],
) -> None:
    """Random POD pages after a block of Perl code: ``=headN`` entries of any level, asked or
    not, with or without text of their own, some texts followed by a verbatim paragraph whose
    comment line looks like a heading, some followed by ``=cut`` and Perl code. Exactly the
    cython-faq rule's questions: a heading of level 2 or deeper, outside an open question,
    asks when its title ends with "?" and it has text of its own, its answer everything up
    to the next heading of its level or higher; every answer in the page; no asked title
    left; a verbatim ``#`` line never a heading; no Perl code in the page."""
    pod, titles, bodies = nsc.random_pod_faq(entries, ["\n"] * len(entries), "$logger->debug")
    page, qa = ns.split_pod_faq(pod)
    nsc.assert_pod_heading_rule_split(entries, titles, bodies, page, qa)
