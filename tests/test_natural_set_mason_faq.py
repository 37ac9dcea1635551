"""The ``mason-faq`` natural-question set (``bench/natural_sets.py``): HTML::Mason's FAQ as
Debian's ``libhtml-mason-perl`` ships it (``usr/share/perl5/HTML/``: ``Mason.pm`` and the
``Mason/`` tree, the manual kept as ``.pod`` pages beside the modules, each module Perl code
with its POD inside; the FAQ the page ``Mason/FAQ.pod``), read by the cython-faq rule
unchanged over perlfaq's POD reader (``split_pod_faq``) after runs of blank lines are made
one (``pod_paragraphs_normalised``), on a small inline package tree of that shape
(``=head1`` groups over ``=head2`` entries, two blank lines before a group and an entry as
Mason's FAQ has them, ``C<>`` / ``L<>`` marks, a verbatim paragraph holding a ``#`` line, a
stated problem, an error report quoting a message, an answer too short to judge, a module
whose POD quotes a question, a manual page over the page limit, the changelog, UPGRADE and
the copyright); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: an entry after two blank lines still asks (POD takes the
run as one break; the reader alone would read its title as text and run its answer into the
one above); titles ending with "?" that have text of their own ask, the stated problems and
the groups stay; each answer is exactly the text under its title; both the ``.pod`` manual
pages and the modules' POD are in the corpus, their Perl code never; no question is left in
any file; the halves are fixed.
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

VERSION = "1:1.59-2"

Q_INHERIT = "Where does a dhandler inherit from? Can I change it to inherit based on the URL path?"
Q_SHARE = "How do I share variables between components?"
Q_PLATFORMS = "What platforms does Mason run on?"
Q_FAST = "Is Mason fast?"
Q_SHORT = "Where can I ask questions about HTML::Mason?"
ASKED = [Q_INHERIT, Q_SHARE, Q_PLATFORMS, Q_FAST]
STATED = "I added a simple autohandler to a directory and now my pages don't appear."
NEEDS = "Prerequisites, in short"
ERROR = "I get an error like this: 'Can't locate object method \"make_ah\"'"
A_INHERIT = (
    "A dhandler's inheritance is determined by its location in the hierarchy, not by the "
    "URL.\n\n```\n       /autohandler\n       # not a heading\n       /dhandler\n```"
)
A_SHARE = (
    "Declare them with `MasonAllowGlobals`, or use a package variable in HTML::Mason::Commands."
)
A_PLATFORMS = "Mason runs wherever Perl and mod_perl run, Unix and Windows alike."
A_FAST = "It is fast enough for most sites once the component cache is warm."

FAQ = (
    "=head1 NAME\n\nHTML::Mason::FAQ - Frequently asked questions\n\n"
    "=head1 AUTOHANDLERS, METHODS, ATTRIBUTES, INHERITANCE\n\n"
    f"=head2 {STATED}\n\nMake sure the autohandler calls C<< $m->call_next >>.\n\n"
    f"=head2 {Q_INHERIT}\n\n"
    "A dhandler's inheritance is determined by its location in the hierarchy,\nnot by the "
    "URL.\n\n"
    "       /autohandler\n       # not a heading\n       /dhandler\n\n\n"
    "=head1 COMPONENTS\n\n"
    "=head2 How do I share variables between L<components|HTML::Mason::Devel>?\n\n"
    "Declare them with C<MasonAllowGlobals>, or use a package variable in\n"
    "HTML::Mason::Commands.\n\n"
    f"=head2 {ERROR}\n\nYou are running an old handler.pl; see UPGRADE.\n\n"
    "=head1 INSTALLATION\n\n"
    f"=head2 {NEEDS}\n\nPerl 5.8 and a few modules from CPAN.\n\n\n"
    f"=head2 {Q_PLATFORMS}\n\n"
    "Mason runs wherever Perl and mod_perl run, Unix and Windows alike.\n\n"
    f"=head2 {Q_FAST}\n\n"
    "It is fast enough for most sites once the component cache is warm.\n\n"
    "=head1 WHERE TO FIND INFORMATION\n\n"
    f"=head2 {Q_SHORT}\n\nThe mailing list.\n"
)
MAIN = (
    "package HTML::Mason;\n\nuse strict;\nsub leftout_code { 1 }\n\n1;\n\n__END__\n\n"
    "=head1 NAME\n\nHTML::Mason - High-performance, dynamic web site authoring system\n\n"
    f"=head1 DESCRIPTION\n\nPeople ask: {Q_SHARE} The answer is elsewhere.\n"
)
ADMIN = (
    "=head1 NAME\n\nHTML::Mason::Admin - Mason Administrator's Manual\n\n\n"
    "=head1 CONFIGURATION\n\nMason is configured through PerlSetVar lines.\n"
)
SHIPPED = {"Mason/FAQ.pod": FAQ}
FILES = {"Mason/FAQ.md", "Mason.md", "Mason/Admin.md", "Mason/Request.md"}


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    """The library's folder as shipped: the FAQ page, the main module quoting a question, a
    manual page spaced with two blank lines, a module, a manual page over the page limit;
    the changelog, UPGRADE and the copyright under ``/usr/share/doc``."""
    root = unpacked_package(tmp_path, monkeypatch, ns.MASON_PACKAGE, VERSION)
    doc = root / ns.MASON_DOC
    (doc / "Mason").mkdir(parents=True)
    (doc / "Mason/FAQ.pod").write_text(faq, encoding="utf-8")
    (doc / "Mason.pm").write_text(MAIN, encoding="utf-8")
    (doc / "Mason/Admin.pod").write_text(ADMIN, encoding="utf-8")
    (doc / "Mason/Request.pm").write_text(
        "package HTML::Mason::Request;\n\nsub leftout { }\n\n"
        "=head1 NAME\n\nHTML::Mason::Request - Mason Request Class\n\n"
        "=head1 METHODS\n\n=over 4\n\n=item call_next\n\nCalls the next component.\n\n"
        "=back\n\n=cut\n\nsub leftout_more { 2 }\n\n1;\n",
        encoding="utf-8",
    )
    (doc / "Mason/Devel.pod").write_text(
        "=head1 NAME\n\nDevel\n\n" + "Words. " * 30_000 + "\n", encoding="utf-8"
    )
    share = root / "usr/share/doc/libhtml-mason-perl"
    write_gz(share / "UPGRADE.gz", "leftout upgrade notes\n")
    write_gz(share / "changelog.gz", "leftout\n")
    (share / "copyright").write_text("leftout\n", encoding="utf-8")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _package(tmp_path, monkeypatch)


def test_mason_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.mason_faq_set()
    nsc.assert_package_set(
        nset,
        "mason-faq",
        ids=[ns._slug(q) for q in ASKED],
        files=FILES,
        source="Mason/FAQ.md",
        version=VERSION,
        too_long="Mason/Devel.pod",
    )
    # POD marks off the titles as a reader types them; the entry after two blank lines asks
    assert [q.text for q in nset.questions] == ASKED
    assert [q.answers[0][0] for q in nset.questions] == [A_INHERIT, A_SHARE, A_PLATFORMS, A_FAST]
    faq = nset.files["Mason/FAQ.md"]
    # the groups (one after two blank lines), the stated problem and the error report stay
    assert faq.startswith("# NAME\n\nHTML::Mason::FAQ - Frequently asked questions")
    assert "\n# COMPONENTS\n" in faq and "=head" not in faq
    assert f"## {STATED}\n\nMake sure the autohandler calls `$m->call_next`." in faq
    assert f"## {ERROR}\n\nYou are running an old handler.pl" in faq
    # the entry after two blank lines is its own: its title and text not run into the
    # stated entry above
    assert f"## {NEEDS}\n\nPerl 5.8 and a few modules from CPAN.\n\n{A_PLATFORMS}\n\n" in faq
    # a module quoting a question: scrubbed, its other text kept; its code out; the manual
    # page spaced with two blank lines read whole
    main = nset.files["Mason.md"]
    assert "People ask:" in main and "The answer is elsewhere." in main and Q_SHARE not in main
    assert "# CONFIGURATION\n\nMason is configured" in nset.files["Mason/Admin.md"]
    assert "- call_next\n\nCalls the next component." in nset.files["Mason/Request.md"]
    assert "leftout" not in " ".join(nset.files.values())  # code, UPGRADE, changelog, copyright
    nsc.assert_left_out(nset, Q_SHORT, len(ASKED))


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.mason_faq_set(), SHIPPED, [*ASKED, Q_SHORT])


def test_mason_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "=head1 INSTALLATION",
        "=head2 Can I use globals in components?\n\nYes, declare them with allow_globals "
        "first.\n\n\n=head1 INSTALLATION",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.mason_faq_set,
        lambda: (doc / "Mason/FAQ.pod").write_text(more, encoding="utf-8"),
    )


def test_mason_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / "Mason/FAQ.pod").unlink()
    nsc.assert_refuses_without_faq(ns.mason_faq_set, "Mason/FAQ.pod")


def test_runs_of_blank_lines_are_what_keeps_an_entry() -> None:
    """Without the runs made one the POD reader takes the command after two blank lines as
    text: the entry is lost and its text runs into the answer above; with them, the rule
    asks exactly the titles ending with "?" that have text of their own."""
    _, raw = ns.split_pod_faq(FAQ)
    assert Q_PLATFORMS not in [q for _, q, _ in raw]
    page, qa = ns.split_pod_page_faq(FAQ)
    assert [q for _, q, _ in qa] == [Q_INHERIT, Q_SHARE, Q_PLATFORMS, Q_FAST, Q_SHORT]
    assert "=head" not in page
    assert "=head" in ns.pod_to_markdown(ADMIN)
    assert ns.pod_page_markdown(ADMIN) == ns.pod_to_markdown(ADMIN.replace("\n\n\n", "\n\n"))
    assert ns.POD_PAGES.suffix == ".pod" and ns.PERLDOC_MODULES.suffix == ".pm"
    assert ns.POD_PAGES.split is ns.PERLDOC_MODULES.split is ns.split_pod_page_faq


_WORD = st.sampled_from(["component", "autohandler", "dhandler", "cache", "request", "args"])
_BLANKS = st.tuples(st.integers(1, 4), st.booleans())  # blank lines after a paragraph; spaced


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 4),  # the =headN level
            st.booleans(),  # ends with "?"
            st.lists(_WORD, min_size=0, max_size=4),  # its own text (empty: none)
            st.booleans(),  # the text followed by a verbatim paragraph with a "#" line
            st.booleans(),  # then Perl code after =cut, up to the next command
            _BLANKS,
        ),
        min_size=1,
        max_size=9,
    )
)
def test_split_pod_page_faq_property(
    entries: list[tuple[int, bool, list[str], bool, bool, tuple[int, bool]]],
) -> None:
    """Random POD pages after a block of Perl code, every paragraph followed by one to four
    blank lines (some holding spaces and tabs): ``=headN`` entries of any level, asked or
    not, with or without text of their own, some texts followed by a verbatim paragraph
    whose comment line looks like a heading, some by ``=cut`` and Perl code. Exactly the
    cython-faq rule's questions, as on a page spaced with one blank line: a heading of level
    2 or deeper, outside an open question, asks when its title ends with "?" and it has
    text of its own, its answer everything up to the next heading of its level or higher;
    every answer in the page; no asked title left; no POD command or Perl code in it."""
    gaps = [(" \t\n" if spaced else "\n") * k for *_, (k, spaced) in entries]
    pod, titles, bodies = nsc.random_pod_faq([e[:5] for e in entries], gaps, "$m->comp")
    page, qa = ns.split_pod_page_faq(pod)
    nsc.assert_pod_heading_rule_split([e[:5] for e in entries], titles, bodies, page, qa)
