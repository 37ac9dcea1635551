"""The ``embperl-faq`` natural-question set (``bench/natural_sets.py``): Embperl's FAQ as
Debian's ``libembperl-perl`` ships it (``usr/lib/x86_64-linux-gnu/perl5/5.36/``:
``Embperl.pm`` with ``Embperl.pod`` beside it, the ``Embperl/`` tree holding the manual as
``.pod`` pages beside the modules; the FAQ the page ``Embperl/Faq.pod``), read by the
cython-faq rule unchanged (``split_pod_page_faq``) and the library's documentation read as
``perldoc`` shows it (``_perldoc_pages`` unchanged), on a small inline package tree of that
shape (titles running onto a second line, a title ending in spaces, a title after two
spaces, a question whose answer is one word, two questions whose ids share their first 40
characters, a stated problem, ``C<>`` marks, a verbatim paragraph holding a ``#`` line, a
``.pod`` beside a ``.pm`` of the same module, a module documented inside its ``.pm``, a page
over the limit, the ``/usr/share/doc`` copy of the FAQ, the examples and the copyright);
offline, no embedding model, no test reads the real package.

What the set's numbers rest on: a title running onto a second line asks as one question
(as a reader sees it, one space between the lines); titles ending with "?" that have text
of their own ask, the stated problems and the groups stay; each answer is exactly the text
under its title; each module has one page, the one ``perldoc`` shows; the copies of the FAQ
elsewhere in the package are out; no question is left in any file; the halves are fixed.
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

VERSION = "2.5.0-17"
DOC_DIR = "usr/lib/x86_64-linux-gnu/perl5/5.36"
"""Where Debian 12's package installs Embperl (``ns.EMBPERL_DOC`` is the glob that finds it)."""

Q_UNIX = "Is there a binary distribution of Embperl for Unix?"
Q_WIN = "Is there a binary distribution of Embperl for Win32?"
Q_ORDER = (
    "I want to run Embperl with mod_perl under Apache. In what order should I do the compiling?"
)
Q_TESTS = "How can I prevent 'make test' from running some of the tests?"
Q_COOKIES = "Can I use Embperl to send cookies?"
ASKED = [Q_WIN, Q_ORDER, Q_TESTS, Q_COOKIES]
STATED = "Help! I got a SIGSEGV! Ack!"
SPACED = "make test fails with SIGXFSZ"
A_WIN = "Win32 binaries for Apache, mod_perl and Embperl are available from the mirror."
A_ORDER = "First mod_perl and Apache, then Embperl."
A_TESTS = (
    "For example, I don't allow CGI scripts. Try:\n\n"
    '```\n $ make test TESTARGS="--help"\n # and for just offline and mod_perl:\n```'
)
A_COOKIES = "Yes, set `%http_headers_out` with a `Set-Cookie` entry before any output."

FAQ = (
    "=head1 NAME\n\nFaq - Frequently Asked Questions about Embperl\n\n"
    "=head1 Downloading, Compiling & Installing\n\n"
    f"=head2 {Q_UNIX}\n\nNo.\n\n"
    f"=head2 {Q_WIN}\n\n"
    "Win32 binaries for Apache, mod_perl and Embperl are available from\nthe mirror.\n\n"
    "=head2 I want to run Embperl with mod_perl under Apache. In what order should I\n"
    "do the compiling?\n\n"
    f"{A_ORDER}\n\n"
    "=head2 How can I prevent 'make test' from running some of the tests? \n\n"
    "For example, I don't allow CGI scripts. Try:\n\n"
    ' $ make test TESTARGS="--help"\n # and for just offline and mod_perl:\n\n'
    f"=head2  {SPACED}\n\nRaise the file size limit before running the tests.\n\n"
    "=head1 Common Problems\n\n"
    f"=head2 {STATED}\n\nUpgrade Perl and rebuild mod_perl and Embperl together.\n\n"
    "=head1 Common Questions\n\n"
    "=head2 Can I use Embperl to send cookies?\n\n"
    "Yes, set C<%http_headers_out> with a C<Set-Cookie> entry before any\noutput.\n\n"
    "=head1 AUTHOR\n\nGerald Richter\n\n=cut\n"
)
SHIPPED = {"Embperl/Faq.pod": FAQ}
FILES = {
    "Embperl/Faq.md",
    "Embperl.md",
    "Embperl/Intro.md",
    "Embperl/Form/Control/select.md",
}


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str = DOC_DIR) -> Path:
    """The library's folder as shipped: the FAQ page; ``Embperl.pod`` (quoting a question)
    beside an ``Embperl.pm`` with POD of its own; a manual page; a module documented inside
    its ``.pm``; a module with no POD; a page over the limit; the FAQ's text copy, the
    examples and the copyright under ``/usr/share/doc``."""
    root = unpacked_package(tmp_path, monkeypatch, ns.EMBPERL_PACKAGE, VERSION)
    doc = root / where
    (doc / "Embperl/Form/Control").mkdir(parents=True)
    (doc / "Embperl/Faq.pod").write_text(FAQ, encoding="utf-8")
    (doc / "Embperl.pod").write_text(
        "=head1 NAME\n\nEmbperl - building dynamic Websites with Perl\n\n"
        f"=head1 DESCRIPTION\n\nPeople ask: {Q_COOKIES} Read on.\n",
        encoding="utf-8",
    )
    (doc / "Embperl.pm").write_text(
        "package Embperl;\n\nsub leftout_init { 1 }\n\n1;\n\n__END__\n\n"
        "=head1 NAME\n\nleftout pm POD\n",
        encoding="utf-8",
    )
    (doc / "Embperl/Intro.pod").write_text(
        "=head1 NAME\n\nIntro - Introduction to Embperl\n\n\n"
        "=head1 Perl code inside HTML\n\nEmbperl executes the code inside [- -] blocks.\n",
        encoding="utf-8",
    )
    (doc / "Embperl/Form/Control/select.pm").write_text(
        "package Embperl::Form::Control::select;\n\nsub leftout_show { 1 }\n\n"
        "=head1 NAME\n\nEmbperl::Form::Control::select - A select box inside an Embperl Form\n"
        "\n=cut\n\nsub leftout_more { 2 }\n\n1;\n",
        encoding="utf-8",
    )
    (doc / "Embperl/Util.pm").write_text(
        "package Embperl::Util;\n\nsub leftout_util { }\n\n1;\n", encoding="utf-8"
    )
    (doc / "Embperl/Config.pod").write_text(
        "=head1 NAME\n\nConfig\n\n" + "Words. " * 30_000 + "\n", encoding="utf-8"
    )
    share = root / "usr/share/doc/libembperl-perl"
    write_gz(share / "Faq.gz", "leftout text copy\n" + FAQ)
    (share / "examples").mkdir(parents=True)
    (share / "examples/README").write_text("leftout example\n", encoding="utf-8")
    (share / "copyright").write_text("leftout\n", encoding="utf-8")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _package(tmp_path, monkeypatch)


def test_embperl_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.embperl_faq_set()
    nsc.assert_package_set(
        nset,
        "embperl-faq",
        # the two "Is there a binary distribution of Embperl for ..." share their first 40
        # characters: the second id is told apart even with the first left out
        ids=[ns._slug(Q_WIN) + "-2", ns._slug(Q_ORDER), ns._slug(Q_TESTS), ns._slug(Q_COOKIES)],
        files=FILES,
        source="Embperl/Faq.md",
        version=VERSION,
        too_long="Embperl/Config.pod",
    )
    # a title on two lines asks as one; trailing spaces off a title
    assert [q.text for q in nset.questions] == ASKED
    assert [q.answers[0][0] for q in nset.questions] == [A_WIN, A_ORDER, A_TESTS, A_COOKIES]
    faq = nset.files["Embperl/Faq.md"]
    # the groups, the stated problem and the spaced title stay as headings, with their text
    assert faq.startswith("# NAME\n\nFaq - Frequently Asked Questions about Embperl")
    assert "\n# Common Questions\n" in faq and "=head" not in faq
    assert f"## {STATED}\n\nUpgrade Perl and rebuild" in faq
    assert f"{SPACED}\n\nRaise the file size limit" in faq
    # one page a module, as perldoc shows it: Embperl.pod over Embperl.pm's own POD, a
    # module's POD inside its .pm, no page for a module without POD; the manual page whole
    main = nset.files["Embperl.md"]
    assert "People ask:" in main and "Read on." in main and Q_COOKIES not in main
    assert "# Perl code inside HTML\n\nEmbperl executes" in nset.files["Embperl/Intro.md"]
    assert "A select box inside an Embperl Form" in nset.files["Embperl/Form/Control/select.md"]
    assert "leftout" not in " ".join(nset.files.values())  # code, pm POD, doc copies, examples
    nsc.assert_left_out(nset, Q_UNIX, len(ASKED))


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.embperl_faq_set(), SHIPPED, [*ASKED, Q_UNIX])


def test_embperl_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "=head1 AUTHOR",
        "=head2 Can I do a Redirect with Embperl?\n\nYes, set the Location header and "
        "return a 301 status.\n\n=head1 AUTHOR",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.embperl_faq_set,
        lambda: (doc / "Embperl/Faq.pod").write_text(more, encoding="utf-8"),
    )


def test_embperl_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / "Embperl/Faq.pod").unlink()
    nsc.assert_refuses_without_faq(ns.embperl_faq_set, "Embperl/Faq.pod")


_WORD = st.sampled_from(["Embperl", "mod_perl", "Apache", "header", "test", "cookies"])
_TITLE = st.lists(_WORD, min_size=1, max_size=8)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 4),  # the =headN level
            st.booleans(),  # ends with "?"
            _TITLE,  # the title's words
            st.data(),  # where the title breaks onto a new line, and trailing spaces
            st.lists(_WORD, min_size=0, max_size=4),  # its own text (empty: none)
        ),
        min_size=1,
        max_size=8,
    )
)
def test_split_pod_page_faq_titles_on_several_lines_property(
    entries: list[tuple[int, bool, list[str], st.DataObject, list[str]]],
) -> None:
    """Random POD FAQ pages whose ``=headN`` titles run onto further lines at random word
    breaks, some ending in spaces, as Embperl's do: each title is read as its words joined
    by one space, and exactly the cython-faq rule's questions ask (a heading of level 2 or
    deeper, outside an open question, asks when its title ends with "?" and it has text of
    its own, its answer everything up to the next heading of its level or higher); every
    answer in the page; no asked title left; no POD command left as text."""
    paragraphs = ["=head1 NAME", "Embperl::Codex - random entries"]
    levels = [1]
    titles = ["NAME"]
    bodies = ["Embperl::Codex - random entries"]
    for n, (level, asks, words, data, text) in enumerate(entries):
        words = [f"entry{n}x", *words]
        title = " ".join(words) + ("?" if asks else "")
        breaks = data.draw(st.lists(st.booleans(), min_size=len(words), max_size=len(words)))
        pod_title = (
            "".join(
                w + ("\n" if br and k < len(words) - 1 else " ")
                for k, (w, br) in enumerate(zip(words, breaks, strict=True))
            ).rstrip(" ")
            + ("?" if asks else "")
            + data.draw(st.sampled_from(["", " ", "  "]))
        )
        paragraphs.append(f"=head{level} {pod_title}")
        levels.append(level)
        titles.append(title)
        bodies.append(f"Text{n} {' '.join(text)}." if text else "")
        paragraphs += [bodies[-1]] if text else []
    pod = "\n\n".join(paragraphs) + "\n"
    page, qa = ns.split_pod_page_faq(pod)
    nsc.assert_heading_rule_split(
        levels,
        titles,
        bodies,
        lambda k: k > 0 and levels[k] >= 2 and entries[k - 1][1] and bool(bodies[k]),
        page,
        qa,
    )
    assert not re.search(r"(?m)^=", page)
