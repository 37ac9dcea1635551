"""The ``dbix-class-faq`` natural-question set (``bench/natural_sets.py``): DBIx::Class's FAQ
as Debian's ``libdbix-class-perl`` ships it (``usr/share/perl5/``: ``DBIx/Class.pm``, the
``DBIx/Class/`` tree holding the manual as ``.pod`` pages under ``Manual/`` beside the
modules, ``SQL/Translator/``; the FAQ the page ``DBIx/Class/Manual/FAQ.pod``), its ``=item``
entries read as headings (``pod_items_as_headings``, ``..`` read as the page's lead "How do
I") and then by the cython-faq rule unchanged (``split_pod_page_faq``), the library's
documentation read as ``perldoc`` shows it (``_perldoc_pages`` unchanged), on a small inline
package tree of that shape (entries finishing the lead, entries asking whole, an entry on
two lines, an entry whose "?" is followed by a remark, an entry with no text before the
next, an entry with a nested list holding an entry that ends with "?", an answer of one
word, a stated problem, ``L<>`` and ``C<>`` marks, a verbatim paragraph, a module documented
inside its ``.pm``, a module with no POD, a page over the limit, the man page, changelog and
copyright); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: an entry finishing the lead asks as the lead and the entry
together; entries ending with "?" that have text of their own ask, stated problems, entries
without text, groups and nested entries stay; each answer is exactly the text under its
entry up to the next one or the next group; no question is left in any file; the halves are
fixed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

VERSION = "0.082843-1"

Q_CREATE = "How do I create a database to use?"
Q_CATALYST = "How do I use DBIx::Class with Catalyst?"
Q_CONNECT = "How do I connect to my database?"
Q_UPDATE = "How do I update a column using data from another column?"
Q_CASCADE = "How do I stop DBIx::Class from attempting to cascade deletes?"
Q_FASTER = "How do I make my program start faster?"
Q_SQL = "See the SQL statements my code is producing?"
Q_STRINGIFY = (
    "Is there a way to make an object auto-stringify itself as a particular column or "
    "group of columns ?"
)
ASKED = [Q_CREATE, Q_CATALYST, Q_UPDATE, Q_CASCADE, Q_FASTER, Q_SQL, Q_STRINGIFY]
REMARKED = (
    "How do I define a relationship where this table contains another table's primary key? "
    "(foreign key)"
)
BARE = "How do I use database functions when updating rows?"
NESTED = "Why not cascade in the database?"
STATED = "Help, I can't connect to postgresql!"
A_CREATE = (
    "First, choose a database. For testing, we recommend DBD::SQLite, which is self-contained."
)
A_CATALYST = "Install Catalyst::Model::DBIC::Schema from CPAN. See its documentation."
A_UPDATE = (
    "To stop the column name from being quoted, tell DBIC the right hand side is an "
    "identifier:\n\n```\n ->update({ somecolumn => { -ident => 'othercolumn' } })\n```"
)
A_CASCADE = (
    "Set the relationship's attributes:\n\n- cascade_delete\n\nTurn it off.\n\n"
    f"- {NESTED}\n\nNested entries stay list entries.\n\nThe rest of the answer."
)
A_FASTER = "Look at the Startup speed in DBIx::Class::Manual::Cookbook chapter."
A_SQL = "Set the shell environment variable `DBIC_TRACE` to a true value."
A_STRINGIFY = "See Stringification in DBIx::Class::Manual::Cookbook for the recipe."

FAQ = (
    "=head1 NAME\n\nDBIx::Class::Manual::FAQ - Frequently Asked Questions (in theory)\n\n"
    "=head1 DESCRIPTION\n\nThis document is intended as an anti-map of the documentation.\n\n"
    "=head1 FAQs\n\nHow Do I:\n\n"
    "=head2 Getting started\n\n=over 4\n\n"
    "=item .. create a database to use?\n\n"
    "First, choose a database. For testing, we recommend\nL<DBD::SQLite>, which is "
    "self-contained.\n\n"
    "=item .. use DBIx::Class with L<Catalyst>?\n\n"
    "Install L<Catalyst::Model::DBIC::Schema> from CPAN. See its\ndocumentation.\n\n\n"
    "=item .. connect to my database?\n\nYes.\n\n"
    "=back\n\n"
    "=head2 Relationships\n\n=over 4\n\n"
    "=item .. define a relationship where this table contains another table's primary key? "
    "(foreign key)\n\n"
    "Create a C<belongs_to> relationship for the field containing the foreign key.\n\n"
    "=item .. use database functions when updating rows?\n\n"
    "=item .. update a column using data from another column?\n\n"
    "To stop the column name from being quoted, tell DBIC the right hand side is an\n"
    "identifier:\n\n"
    " ->update({ somecolumn => { -ident => 'othercolumn' } })\n\n"
    "=item .. stop DBIx::Class from attempting to cascade deletes?\n\n"
    "Set the relationship's attributes:\n\n=over 4\n\n"
    "=item cascade_delete\n\nTurn it off.\n\n"
    f"=item {NESTED}\n\nNested entries stay list entries.\n\n"
    "=back\n\nThe rest of the answer.\n\n"
    "=back\n\n"
    "=head2 Misc\n\n=over 4\n\n"
    f"=item {Q_FASTER}\n\n"
    'Look at the L<DBIx::Class::Manual::Cookbook/"Startup speed"> chapter.\n\n'
    f"=item {Q_SQL}\n\n"
    "Set the shell environment variable C<DBIC_TRACE> to a true value.\n\n"
    "=back\n\n"
    "=head2 Notes for CDBI users\n\n=over 4\n\n"
    "=item Is there a way to make an object auto-stringify itself as a\n"
    "particular column or group of columns ?\n\n"
    "See L<DBIx::Class::Manual::Cookbook/Stringification> for the recipe.\n\n"
    "=back\n\n"
    "=head2 Troubleshooting\n\n=over 4\n\n"
    f"=item {STATED}\n\nLikely you have two copies of postgresql installed.\n\n"
    "=back\n\n"
    "=head1 FURTHER QUESTIONS?\n\nCheck the list of additional DBIC resources.\n\n"
    "=head1 COPYRIGHT AND LICENSE\n\nThis module is free software.\n\n=cut\n"
)
FILES = {
    "DBIx/Class/Manual/FAQ.md",
    "DBIx/Class.md",
    "DBIx/Class/Manual/Intro.md",
    "SQL/Translator/Parser/DBIx/Class.md",
}


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The library's folder as shipped: the FAQ page; ``DBIx/Class.pm`` with POD between its
    code; a manual page quoting a question; a module documented inside its ``.pm`` under
    ``SQL/``; a module with no POD; a page over the limit; the man page, changelog and
    copyright outside the library's folder."""
    root = unpacked_package(tmp_path, monkeypatch, ns.DBIC_PACKAGE, VERSION)
    doc = root / ns.DBIC_DOC
    (doc / "DBIx/Class/Manual").mkdir(parents=True)
    (doc / "SQL/Translator/Parser/DBIx").mkdir(parents=True)
    (doc / ns.DBIC_FAQ).write_text(FAQ, encoding="utf-8")
    (doc / "DBIx/Class.pm").write_text(
        "package DBIx::Class;\n\nsub leftout_mk_classdata { 1 }\n\n"
        "=head1 NAME\n\nDBIx::Class - Extensible and flexible object <-> relational mapper.\n"
        "\n=cut\n\nsub leftout_more { 2 }\n\n1;\n",
        encoding="utf-8",
    )
    (doc / "DBIx/Class/Manual/Intro.pod").write_text(
        "=head1 NAME\n\nDBIx::Class::Manual::Intro - Introduction to DBIx::Class\n\n\n"
        f"=head1 THE DATABASE\n\nPeople ask: {Q_CREATE} Read on.\n",
        encoding="utf-8",
    )
    (doc / "SQL/Translator/Parser/DBIx/Class.pm").write_text(
        "package SQL::Translator::Parser::DBIx::Class;\n\nsub leftout_parse { 1 }\n\n"
        "=head1 NAME\n\nSQL::Translator::Parser::DBIx::Class - Create a SQL::Translator "
        "schema from a DBIx::Class::Schema instance\n\n=cut\n",
        encoding="utf-8",
    )
    (doc / "DBIx/Class/Carp.pm").write_text(
        "package DBIx::Class::Carp;\n\nsub leftout_carp { }\n\n1;\n", encoding="utf-8"
    )
    (doc / "DBIx/Class/Manual/Cookbook.pod").write_text(
        "=head1 NAME\n\nCookbook\n\n" + "Recipes. " * 20_000 + "\n", encoding="utf-8"
    )
    write_gz(root / "usr/share/man/man3/DBIx::Class::Manual::FAQ.3pm.gz", "leftout man\n" + FAQ)
    share = root / "usr/share/doc/libdbix-class-perl"
    write_gz(share / "changelog.gz", "leftout changes\n")
    (share / "copyright").write_text("leftout\n", encoding="utf-8")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _package(tmp_path, monkeypatch)


def test_dbix_class_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.dbix_class_faq_set()
    nsc.assert_package_set(
        nset,
        "dbix-class-faq",
        ids=[ns._slug(q) for q in ASKED],
        files=FILES,
        source="DBIx/Class/Manual/FAQ.md",
        version=VERSION,
        too_long="DBIx/Class/Manual/Cookbook.pod",
    )
    # an entry finishing the lead asks as the lead and the entry; an entry on two lines as one
    assert [q.text for q in nset.questions] == ASKED
    assert [q.answers[0][0] for q in nset.questions] == [
        A_CREATE,
        A_CATALYST,
        A_UPDATE,
        A_CASCADE,
        A_FASTER,
        A_SQL,
        A_STRINGIFY,
    ]
    faq = nset.files["DBIx/Class/Manual/FAQ.md"]
    # the lead, the groups, the entry whose "?" is followed by a remark, the entry without
    # text and the stated problem stay as headings; the nested entries stay list entries
    assert "# FAQs\n\nHow Do I:\n\n## Getting started\n\nFirst, choose a database." in faq
    assert f"### {REMARKED}\n\nCreate a `belongs_to` relationship" in faq
    assert f"### {BARE}\n\nTo stop the column name" in faq
    assert f"- {NESTED}\n\nNested entries stay" in faq
    assert f"## Troubleshooting\n\n### {STATED}\n\nLikely you have" in faq
    assert "# FURTHER QUESTIONS?\n\nCheck the list" in faq
    assert not re.search(r"(?m)^=", faq) and ".." not in faq
    # one page a module, as perldoc shows it; the manual page whole, less the question
    intro = nset.files["DBIx/Class/Manual/Intro.md"]
    assert "People ask:" in intro and "Read on." in intro and Q_CREATE not in intro
    assert "Extensible and flexible object" in nset.files["DBIx/Class.md"]
    assert "Create a SQL::Translator schema" in nset.files["SQL/Translator/Parser/DBIx/Class.md"]
    assert "leftout" not in " ".join(nset.files.values())  # code, man page, changelog
    nsc.assert_left_out(nset, Q_CONNECT, len(ASKED))


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    # the questions as the reader reads them: the lead and each entry together
    shipped = {ns.DBIC_FAQ: ns.pod_items_as_headings(FAQ, ns.DBIC_LEAD)}
    nsc.assert_leak_checked(ns.dbix_class_faq_set(), shipped, [*ASKED, Q_CONNECT])


def test_dbix_class_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "=head2 Misc\n\n=over 4\n\n",
        "=head2 Misc\n\n=over 4\n\n=item .. page through my results?\n\n"
        "Use the C<rows> and C<page> attributes of a search.\n\n",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.dbix_class_faq_set,
        lambda: (doc / ns.DBIC_FAQ).write_text(more, encoding="utf-8"),
    )


def test_dbix_class_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.DBIC_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.dbix_class_faq_set, ns.DBIC_FAQ)


def test_other_pod_pages_are_read_as_before(doc: Path) -> None:
    """The FAQ's reading reaches no other page: a manual page holding an ``=over`` list of
    titled entries ending with "?" reads as :data:`POD_PAGES` reads it."""
    page = (
        "=head1 NAME\n\nJoining\n\n=head2 Questions\n\n=over 4\n\n"
        "=item .. join two tables?\n\nUse the join attribute.\n\n=back\n"
    )
    (doc / "DBIx/Class/Manual/Joining.pod").write_text(page, encoding="utf-8")
    nset = ns.dbix_class_faq_set()
    assert nset.files["DBIx/Class/Manual/Joining.md"] == ns.POD_PAGES.convert(page)
    assert "- .. join two tables?\n\nUse the join attribute." in ns.POD_PAGES.convert(page)
    assert len(nset.questions) == len(ASKED)


_WORD = st.sampled_from(["DBIx::Class", "search", "row", "join", "schema", "rows"])
_GAP = st.sampled_from(["\n\n", "\n\n\n", "\n \n"])
_Item = tuple[bool, bool, list[str], list[str], bool]
"""One random entry: opens with ``..``, ends with "?", its title's words, its own text's
words (none: no text), whether a nested list follows its text."""


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),  # the group's title ends with "?"
            st.booleans(),  # the group holds a bullet list before its entries
            st.lists(
                st.tuples(
                    st.booleans(),
                    st.booleans(),
                    st.lists(_WORD, min_size=1, max_size=5),
                    st.lists(_WORD, min_size=0, max_size=4),
                    st.booleans(),
                ),
                min_size=0,
                max_size=5,
            ),
        ),
        min_size=1,
        max_size=4,
    ),
    st.data(),
)
def test_pod_items_as_headings_then_the_cython_faq_rule_property(
    groups: list[tuple[bool, bool, list[_Item]]], data: st.DataObject
) -> None:
    """Random POD FAQ pages of ``=head2`` groups, each an ``=over`` list of titled ``=item``
    entries (some opening with ``..``, some ending with "?", some with text, some with a
    nested list whose entry ends with "?" after their text), a group's bullet list before
    them, paragraphs apart by random runs of blank lines: :func:`split_dbic_faq` gives
    exactly the cython-faq rule's questions on the page as if each outermost entry were a
    heading one level below its group and ``..`` the lead (a heading of level 2 or deeper,
    outside an open question, asks when its title ends with "?" and it has text of its own,
    its answer everything up to the next heading of its level or higher); bullets and
    nested entries stay list entries inside the text; no POD command left as text."""
    paragraphs = ["=head1 NAME", "Codex - random entries", "=head1 FAQs", "How Do I:"]
    levels, titles = [1, 1], ["NAME", "FAQs"]
    bodies = ["Codex - random entries", "How Do I:"]
    n = 0
    for g, (group_asks, bullets, items) in enumerate(groups):
        title = f"group{g}x topic" + ("?" if group_asks else "")
        paragraphs += [f"=head2 {title}"]
        levels.append(2)
        titles.append(title)
        bodies.append(f"Bullet{g} text." if bullets else "")
        if bullets:  # a bullet's label is no title: its paragraph is the group's text
            paragraphs += ["=over 4", "=item *", f"Bullet{g} text.", "=back"]
        paragraphs.append("=over 4")
        for dotted, asks, words, text, nested in items:
            entry = f"item{n}x {' '.join(words)}" + ("?" if asks else "")
            paragraphs.append(f"=item {'.. ' if dotted else ''}{entry}")
            levels.append(3)
            titles.append(ns.pod_inline(f"How do I {entry}" if dotted else entry))
            body = [f"Text{n} {' '.join(text)}."] if text else []
            paragraphs += body
            if text and nested:
                paragraphs += ["=over 4", f"=item nested{n}x ask?", f"Nested{n} text.", "=back"]
                body += [f"- nested{n}x ask?", f"Nested{n} text."]
            bodies.append(ns.pod_inline("\n\n".join(body)))
            n += 1
        paragraphs.append("=back")
    gaps = data.draw(st.lists(_GAP, min_size=len(paragraphs), max_size=len(paragraphs)))
    pod = "".join(p + gap for p, gap in zip(paragraphs, gaps, strict=True))
    page, qa = ns.split_dbic_faq(pod)
    nsc.assert_heading_rule_split(
        levels,
        titles,
        bodies,
        lambda k: levels[k] >= 2 and titles[k].endswith("?") and bool(bodies[k]),
        page,
        qa,
    )
    assert not re.search(r"(?m)^=", page)
    for k, (*_, text, nest) in enumerate(e for *_, items in groups for e in items):
        assert (f"- nested{k}x ask?\n\nNested{k} text." in page) == bool(text and nest)
