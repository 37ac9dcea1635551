"""The ``net-ldap-faq`` natural-question set (``bench/natural_sets.py``): perl-ldap's FAQ as
Debian's ``libnet-ldap-perl`` ships it (``usr/share/perl5/``: ``Net/LDAP.pm`` and the
``Net/LDAP/`` modules; the main classes documented in ``.pod`` files beside code-only
``.pm`` files, the others by the POD inside the ``.pm``; the FAQ ``Net/LDAP/FAQ.pod``), read
by the cython-faq rule unchanged (``split_pod_faq``) after every run of blank lines is made
one (``pod_paragraphs_normalised``), on a small inline package tree of that shape (a command
after two blank lines, a blank line holding spaces, a title running onto a second
line, a stated entry, a ``=head2`` with no text of its own over a ``Z<>`` ``=head3``
question, an answer too short to judge, a ``.pod`` beside a code-only ``.pm``, a ``.pm``
with POD of its own beside a ``.pod`` of the same module, a module with no POD, one page over
the limit, the examples folder and the copyright); offline, no embedding model, no test reads
the real package.

What the set's numbers rest on: a POD command after a run of blank lines is read as a
command (without that, the question after it is text of the answer before and is never
asked); titles ending with "?" that have their own text ask, the stated entries and the
``=head1`` groups stay; each answer is exactly the text under its title; each module has
one page, the one ``perldoc`` shows (its ``.pod``, else its ``.pm``'s POD), and a module
without POD none; no question is left in any file; the halves are fixed.
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
from debian_package_double import unpacked_package

VERSION = "1:0.6800+dfsg-1"

Q_WHAT = "What is perl-ldap?"
Q_GET = "Where can I get it?"
Q_BIND = "How can I tell when the server returns an error, bind() always returns true?"
Q_PASSWORD = "... in most LDAP servers?"
Q_SHORT = "Is there a web page for perl-ldap?"
ASKED = [Q_WHAT, Q_GET, Q_BIND, Q_PASSWORD]
STATED = "Are there any other code examples."
A_WHAT = (
    "perl-ldap is the distribution name. The perl-ldap distribution contains the Net::LDAP modules."
)
A_GET = (
    "Perl-ldap is available from CPAN. You can find the released versions at:\n\n"
    "```\n    http://search.cpan.org/dist/perl-ldap/\n```"
)
A_BIND = "Net::LDAP methods return a `Net::LDAP::Message` object; check its `code` method."
A_PASSWORD = "Use the `modify` method with the `userPassword` attribute and a new value."

FAQ = (
    "=head1 NAME\n\nNet::LDAP::FAQ - Frequently Asked Questions about Net::LDAP\n\n"
    "=head1 GENERAL\n\n\n"
    "=head2 What is perl-ldap?\n\n"
    "perl-ldap is the distribution name. The perl-ldap distribution contains\n"
    "the Net::LDAP modules.\n\n"
    "=head2 Where can I get it?\n\n"
    "Perl-ldap is available from CPAN. You can find the released versions at:\n\n"
    "    http://search.cpan.org/dist/perl-ldap/\n\n\n"
    "=head1 USING NET::LDAP\n\n"
    "=head2 How can I tell when the server returns an error, bind() always returns\n"
    "true?\n\n"
    "Net::LDAP methods return a C<Net::LDAP::Message> object; check its C<code> method.\n\n"
    "=head2 Are there any other code examples.\n\n"
    "Yes, in the examples folder of the distribution.\n\n"
    "=head2 How do I reset a user's password ...\n\n"
    "=head3 Z<>... in most LDAP servers?\n\n"
    "Use the C<modify> method with the C<userPassword> attribute\nand a new value.\n"
    "   \n\n"
    "=head2 Is there a web page for perl-ldap?\n\nYes there is.\n\n"
    "=head1 AUTHORS\n\nGraham Barr\n\n=cut\n"
)
SHIPPED = {"Net/LDAP/FAQ.pod": FAQ}
FILES = {
    "Net/LDAP/FAQ.md",
    "Net/LDAP.md",
    "Net/LDAP/Entry.md",
    "Net/LDAP/Control.md",
    "Net/LDAP/RFC.md",
}


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The library's folder as shipped: the FAQ page; ``Net/LDAP.pod`` (quoting a question)
    beside a code-only ``Net/LDAP.pm``; ``Entry.pod`` beside an ``Entry.pm`` with POD of its
    own; a module documented inside its ``.pm``; a module with no POD; a ``.pod`` page whose
    headings follow runs of blank lines; one page over the limit; the examples folder and the
    copyright elsewhere in the package."""
    root = unpacked_package(tmp_path, monkeypatch, ns.NET_LDAP_PACKAGE, VERSION)
    doc = root / ns.NET_LDAP_DOC
    (doc / "Net/LDAP").mkdir(parents=True)
    (doc / "Net/LDAP/FAQ.pod").write_text(FAQ, encoding="utf-8")
    (doc / "Net/LDAP.pod").write_text(
        "=head1 NAME\n\nNet::LDAP - Lightweight Directory Access Protocol\n\n"
        f"=head1 DESCRIPTION\n\nPeople ask: {Q_WHAT} Read on.\n\n"
        "=head2 Constructor\n\nnew ( HOST, OPTIONS ) creates a new Net::LDAP object.\n",
        encoding="utf-8",
    )
    (doc / "Net/LDAP.pm").write_text(
        "package Net::LDAP;\n\nuse strict;\n\nsub leftout_new {\n  1;\n}\n\n1;\n",
        encoding="utf-8",
    )
    (doc / "Net/LDAP/Entry.pod").write_text(
        "=head1 NAME\n\nNet::LDAP::Entry - An LDAP entry object\n", encoding="utf-8"
    )
    (doc / "Net/LDAP/Entry.pm").write_text(
        "package Net::LDAP::Entry;\n\n1;\n\n__END__\n\n=head1 NAME\n\nleftout pm POD\n",
        encoding="utf-8",
    )
    (doc / "Net/LDAP/Control.pm").write_text(
        "package Net::LDAP::Control;\n\nsub leftout_code { 1 }\n\n=head1 NAME\n\n"
        "Net::LDAP::Control - LDAPv3 control object base class\n\n=cut\n\n"
        "sub leftout_more { 2 }\n\n1;\n",
        encoding="utf-8",
    )
    (doc / "Net/LDAP/ASN.pm").write_text(
        "package Net::LDAP::ASN;\n\nsub leftout_asn { }\n\n1;\n", encoding="utf-8"
    )
    (doc / "Net/LDAP/RFC.pod").write_text(
        "=head1 NAME\n\nNet::LDAP::RFC - List of related RFCs\n\n\n"
        "=head2 RFC-4511 Lightweight Directory Access Protocol (LDAP): The Protocol\n\n"
        "The protocol itself.\n",
        encoding="utf-8",
    )
    (doc / "Net/LDAP/Huge.pod").write_text(
        "=head1 NAME\n\nHuge\n\n" + "Words. " * 30_000 + "\n", encoding="utf-8"
    )
    share = root / "usr/share/doc/libnet-ldap-perl"
    (share / "examples").mkdir(parents=True)
    (share / "examples/ldapsearch").write_text("# leftout example\n", encoding="utf-8")
    (share / "copyright").write_text("leftout\n", encoding="utf-8")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _package(tmp_path, monkeypatch)


def test_net_ldap_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.net_ldap_faq_set()
    nsc.assert_package_set(
        nset,
        "net-ldap-faq",
        ids=[ns._slug(q) for q in ASKED],
        files=FILES,
        source="Net/LDAP/FAQ.md",
        version=VERSION,
        too_long="Net/LDAP/Huge.pod",
    )
    # a title on two lines read as one; Z<> off the =head3 title
    assert [q.text for q in nset.questions] == ASKED
    assert [q.answers[0][0] for q in nset.questions] == [A_WHAT, A_GET, A_BIND, A_PASSWORD]
    faq = nset.files["Net/LDAP/FAQ.md"]
    # every command after a run of blank lines read as one: the groups, the stated entry and
    # the =head2 with no text of its own stay as headings; no POD command left as text
    assert "=head" not in faq and faq.startswith("# NAME\n\nNet::LDAP::FAQ - Frequently")
    assert "# GENERAL\n\n" in faq and "\n# USING NET::LDAP\n\n" in faq
    assert f"## {STATED}\n\nYes, in the examples folder" in faq
    assert "## How do I reset a user's password ...\n\n" in faq
    assert faq.endswith("# AUTHORS\n\nGraham Barr\n")
    # one page a module, as perldoc shows it: the .pod over a code-only .pm and over a .pm
    # with POD of its own; a .pm's POD when it has no .pod; no page for a module without POD
    main = nset.files["Net/LDAP.md"]
    assert "People ask:" in main and "Read on." in main and Q_WHAT not in main
    assert "## Constructor\n\nnew ( HOST, OPTIONS )" in main
    assert nset.files["Net/LDAP/Entry.md"] == "# NAME\n\nNet::LDAP::Entry - An LDAP entry object\n"
    assert "Net::LDAP::Control - LDAPv3 control object" in nset.files["Net/LDAP/Control.md"]
    assert "## RFC-4511 Lightweight" in nset.files["Net/LDAP/RFC.md"]
    assert "leftout" not in " ".join(nset.files.values())  # code, pm POD, examples, copyright
    nsc.assert_left_out(nset, Q_SHORT, len(ASKED))


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.net_ldap_faq_set(), SHIPPED, [*ASKED, Q_SHORT])


def test_net_ldap_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "=head1 AUTHORS",
        "=head2 Can I search an LDAP server over SSL?\n\nYes, with Net::LDAPS or start_tls."
        "\n\n\n=head1 AUTHORS",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.net_ldap_faq_set,
        lambda: (doc / "Net/LDAP/FAQ.pod").write_text(more, encoding="utf-8"),
    )


def test_net_ldap_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / "Net/LDAP/FAQ.pod").unlink()
    nsc.assert_refuses_without_faq(ns.net_ldap_faq_set, "Net/LDAP/FAQ.pod")


def test_blank_line_runs_are_what_make_the_commands_after_them_read() -> None:
    """Without the runs of blank lines made one, POD's own paragraph break, the question
    after two blank lines is text of the group before and never asks, and a group title
    after two is text of the answer before (three blank lines are two breaks, and read);
    with them, :func:`split_pod_faq` unchanged asks every question."""
    _, raw = ns.split_pod_faq(FAQ)
    assert Q_WHAT not in [q for _, q, _ in raw]
    assert any("=head1 USING NET::LDAP" in a for _, _, a in raw)
    page, qa = ns.split_pod_page_faq(FAQ)
    nsc.assert_split_answers(
        page,
        qa,
        [*ASKED, Q_SHORT],
        {
            ns._slug(Q_WHAT): A_WHAT,
            ns._slug(Q_GET): A_GET,
            ns._slug(Q_BIND): A_BIND,
            ns._slug(Q_PASSWORD): A_PASSWORD,
            ns._slug(Q_SHORT): "Yes there is.",
        },
    )
    assert (ns.POD_PAGES.suffix, ns.PERLDOC_MODULES.suffix) == (".pod", ".pm")
    assert ns.POD_PAGES.split is ns.split_pod_page_faq


_BLANK = st.sampled_from(["", " ", "\t", "  \t"])
_PARAGRAPH = st.lists(
    st.sampled_from(["=head2 entry?", "word", "    $ldap->bind;", "=cut", "C<dn>", "text."]),
    min_size=1,
    max_size=3,
).map("\n".join)


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.tuples(_PARAGRAPH, st.lists(_BLANK, min_size=1, max_size=3)), min_size=1),
    st.integers(0, 3),
)
def test_pod_paragraphs_normalised_property(
    paragraphs: list[tuple[str, list[str]]], leading: int
) -> None:
    """Paragraphs of POD lines joined by runs of one to three blank lines, some holding spaces
    or tabs, after leading newlines: exactly the paragraphs, each once, joined by one empty
    line; a second pass changes nothing."""
    pod = "\n" * leading + "".join(p + "\n" + "\n".join(b) + "\n" for p, b in paragraphs)
    out = ns.pod_paragraphs_normalised(pod)
    assert out == "\n\n".join(p for p, _ in paragraphs) + "\n\n"
    assert ns.pod_paragraphs_normalised(out) == out


_WORD = st.sampled_from(["entry", "attribute", "filter", "bind", "search", "schema"])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 4),  # the =headN level
            st.booleans(),  # ends with "?"
            st.lists(_WORD, min_size=0, max_size=4),  # its own text (empty: none)
            st.booleans(),  # the text followed by a verbatim paragraph with a "#" line
        ),
        min_size=1,
        max_size=9,
    ),
    st.data(),
)
def test_split_pod_page_faq_property(
    entries: list[tuple[int, bool, list[str], bool]], data: st.DataObject
) -> None:
    """Random POD pages whose paragraphs are parted by runs of one to three blank lines (some
    holding spaces or tabs): ``=headN`` entries of any level, asked or not, with or without
    text of their own, some followed by a verbatim paragraph whose comment line looks like a
    heading. The same split as the page with single blank lines gives, and exactly the
    cython-faq rule's questions: a heading of level 2 or deeper, outside an open question,
    asks when its title ends with "?" and it has text of its own, its answer everything up
    to the next heading of its level or higher; every answer in the page; no asked title
    left; no POD command left as text."""
    paragraphs = ["=head1 NAME", "Net::LDAP::Codex - random entries"]
    titles: list[str] = []
    bodies: list[str] = []
    for n, (level, asks, words, verbatim) in enumerate(entries):
        titles.append(f"entry{n}x ask this?" if asks else f"entry{n}x topic")
        paragraphs.append(f"=head{level} {titles[-1]}")
        blocks = [f"Text{n} {' '.join(words)}."] if words else []
        if verbatim:
            blocks.append(f"```\n    # code{n} comment\n    $ldap->search({n});\n```")
        paragraphs += [f"Text{n} {' '.join(words)}."] if words else []
        paragraphs += [f"    # code{n} comment\n    $ldap->search({n});"] if verbatim else []
        bodies.append("\n\n".join(blocks))
    runs = data.draw(
        st.lists(
            st.lists(_BLANK, min_size=1, max_size=3),
            min_size=len(paragraphs),
            max_size=len(paragraphs),
        )
    )
    pod = "".join(p + "\n" + "\n".join(b) + "\n" for p, b in zip(paragraphs, runs, strict=True))
    page, qa = ns.split_pod_page_faq(pod)
    assert (page, qa) == ns.split_pod_faq("\n\n".join(paragraphs) + "\n")
    levels = [1] + [e[0] for e in entries]
    nsc.assert_heading_rule_split(
        levels,
        ["NAME", *titles],
        ["Net::LDAP::Codex - random entries", *bodies],
        lambda k: k > 0 and levels[k] >= 2 and entries[k - 1][1] and bool(bodies[k - 1]),
        page,
        qa,
    )
    assert not re.search(r"(?m)^=", page)
