"""The ``libstdcxx-faq`` natural-question set (``bench/natural_sets.py``), the manual pages it
adds (the FAQ's one-hop links) and the question-leak check (``bench/check_question_leaks.py``)
on a small inline ``faq.html`` shaped as Debian's ``libstdc++-12-doc`` ships it (DocBook XSL:
the navigation header and footer, an article whose ``qandaset`` opens with the generated list
of every question, then a table of ``qandadiv`` section rows, ``toc`` rows and numbered
``question`` / ``answer`` rows; a question with code in it, a user's complaint, an answer that
is a pointer to a chapter, answers linking to manual pages, to a missing one, to one over the
page limit, to the FAQ itself, to the front page and off-site) beside the manual's chunked
pages (one quoting a question, one not linked), the front and book pages and the Doxygen
reference, in a package tree laid out as the package unpacks (marker present, nothing
downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file; each answer is
exactly its answer row; the corpus is the FAQ and the manual pages it links to, each once,
nothing else; ids are the FAQ's numbers, so an added entry keeps the halves; an answer too
short to judge leaves the set but not the corpus's scrubbing.
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

Q_WHAT = "What is libstdc++?"
Q_PATHS = "How do I insure that the dynamically linked library will be found?"
Q_HUGE = "This library is HUGE!"
Q_SIZE = "list::size() is O(n)!"
Q_CAP = "How do I make std::vector<T>::capacity() == std::vector<T>::size?"
ASKED = (Q_WHAT, Q_PATHS, Q_HUGE, Q_SIZE, Q_CAP)
A_WHAT = (
    "The GNU Standard C++ Library v3 is an ongoing project to implement the ISO 14882 C++ "
    "Standard Library. See the GPL and the Home page."
)
A_PATHS = "Set LD_LIBRARY_PATH, or link with -Wl,-rpath, so that the loader finds libstdc++.so."
A_HUGE = "Usually the size of libraries on disk isn't noticeable; see the status of the work."
A_CAP = (
    "Since C++11 just call the shrink_to_fit() member function. See Shrink-to-fit strings for "
    "strings."
)
ANSWERS = {"1.1": A_WHAT, "3.4": A_PATHS, "3.6": A_HUGE, "7.8": A_CAP}


def _q(anchor: str, num: str, text: str) -> str:
    return (
        f'<tr class="question"><td align="left" valign="top"><a id="{anchor}"></a>'
        f'<a id="{anchor}.q"></a><p><strong>{num}</strong></p></td>'
        f'<td align="left" valign="top"><p>\n      {text}\n    </p></td></tr>'
    )


def _a(html_: str) -> str:
    return (
        '<tr class="answer"><td align="left" valign="top"></td>'
        f'<td align="left" valign="top">{html_}</td></tr>'
    )


def _div(anchor: str, title: str) -> str:
    return (
        '<tr class="qandadiv"><td align="left" valign="top" colspan="2">'
        f'<h3 class="title"><a id="{anchor}"></a>{title}</h3></td></tr>'
        '<tr class="toc"><td align="left" valign="top" colspan="2"><dl><dt>tocline '
        f'<a href="faq.html#{anchor}">{title}</a></dt></dl></td></tr>'
    )


NAV = (
    '<div class="navheader"><table width="100%" summary="Navigation header"><tr><td>'
    '<a accesskey="p" href="bk03.html">Prev</a></td></tr></table></div>'
)
FOOT = (
    '<div class="navfooter"><table width="100%" summary="Navigation footer"><tr><td>'
    '<a accesskey="h" href="index.html">Home</a></td></tr></table></div>'
)
ENTRIES = (
    _div("faq.info", "1. General Information")
    + _q("faq.what", "1.1.", "What is libstdc++?")
    + _a(
        "<p>The GNU Standard C++ Library v3 is an ongoing project to\n implement the ISO 14882 "
        'C++ Standard Library. See the <a class="link" href="manual/license.html">GPL</a> and '
        'the <a class="link" href="index.html">Home</a> page.</p>'
    )
    + _div("faq.installation", "3. Installation")
    + _q("faq.how_to_set_paths", "3.4.", Q_PATHS)
    + _a(
        "<p>Set LD_LIBRARY_PATH, or link with -Wl,-rpath, so that the loader finds "
        "libstdc++.so.</p>"
    )
    + _q("faq.size", "3.6.", "This library is HUGE!")
    + _a(
        "<p>Usually the size of libraries on disk isn't noticeable; see the "
        '<a class="link" href="manual/status.html#status.iso.2011">status</a> of the work.</p>'
    )
    + _div("faq.misc", "7. Miscellaneous")
    + _q("faq.list_size_on", "6.8.", '<code class="code">list::size()</code> is O(n)!')
    + _a('<p>See the <a class="link" href="manual/containers.html">Containers</a> chapter.</p>')
    + _q(
        "faq.size_equals_capacity",
        "7.8.",
        'How do I make <code class="code">std::vector&lt;T&gt;::capacity() == '
        "std::vector&lt;T&gt;::size</code>?",
    )
    + _a(
        '<p>Since C++11 just call the <code class="function">shrink_to_fit()</code> member '
        'function. See <a class="link" href="manual/strings.html#strings.string.shrink" '
        'title="Shrink to Fit">Shrink-to-fit strings</a> for <a href="manual/strings.html">'
        'strings</a>.</p><p class="x"><a href="https://gcc.gnu.org/onlinedocs/">'
        '</a><a href="faq.html#faq.what"></a><a href="manual/../bk03.html"></a></p>'
    )
)
LIST = (
    '<dl><dt></dt><dd><dl><dt>1.1. <a href="faq.html#faq.what">\n      What is libstdc++?\n'
    '    </a></dt><dt>3.4. <a href="faq.html#faq.how_to_set_paths">How do I insure that the '
    "dynamically linked library will be found?\n    </a></dt></dl></dd></dl>"
)


def faq_page(entries: str = ENTRIES) -> str:
    """``faq.html`` as shipped around ``entries`` (the table's rows)."""
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<html><head><title>Frequently '
        f"Asked Questions</title></head><body>{NAV}"
        '<div class="article"><div class="titlepage"><div><div><h1 class="title"><a id="faq">'
        '</a>Frequently Asked Questions</h1></div><div><p class="copyright">Copyright © '
        '2008-2018 FSF</p></div></div><hr /></div><div class="qandaset"><a id="faq.faq"></a>'
        f'{LIST}<table border="0" style="width: 100%;"><tbody>{entries}</tbody></table></div>'
        f"</div>{FOOT}</body></html>"
    )


def manual_page(title: str, body: str) -> str:
    """A chunk of the manual as shipped: navigation header, a section opening with its table
    of contents, navigation footer."""
    return (
        f"<html><head><title>{title}</title></head><body>{NAV}"
        '<div class="section"><div class="titlepage"><div><div><h2 class="title">'
        f'<a id="s"></a>{title}</h2></div></div></div><div class="toc"><dl class="toc"><dt>'
        f'<a href="#s">tocline {title}</a></dt></dl></div>{body}</div>{FOOT}</body></html>'
    )


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: str | None = None) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.LIBSTDCXX_PACKAGE, "12.2.0-14+deb12u1")
    doc: Path = root / ns.LIBSTDCXX_DOC
    (doc / "manual").mkdir(parents=True)
    (doc / "user").mkdir()
    (doc / ns.LIBSTDCXX_FAQ).write_text(faq_page() if page is None else page, encoding="utf-8")
    (doc / "manual/strings.html").write_text(
        manual_page(
            "Strings",
            "<p>Shrink to fit with shrink_to_fit(). People ask: This library is HUGE! "
            "It is not.</p>",
        )
    )
    (doc / "manual/containers.html").write_text(
        manual_page("Containers", "<p>Sequences: list, vector and deque.</p>")
    )
    (doc / "manual/status.html").write_text(
        manual_page("Status", "<p>Implementation status row.</p>" * 6_000)
    )
    (doc / "manual/io.html").write_text(manual_page("Input and Output", "<p>leftout io</p>"))
    (doc / "index.html").write_text(manual_page("The GNU C++ Library", "<p>leftout home</p>"))
    (doc / "bk03.html").write_text(manual_page("", "<p>leftout book</p>"))
    (doc / "user/a00002.html").write_text("<p>leftout doxygen</p>")
    (doc / "README").write_text("leftout readme\n")
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (:func:`faq_page`), the FAQ's folder."""
    return _package(tmp_path, monkeypatch)


def test_libstdcxx_linked_pages_one_hop_in_the_manual(doc_dir: Path) -> None:
    # in the order of the first link to each; the missing license page, the front page,
    # the book page (by "manual/../"), the FAQ itself and the off-site link are none;
    # strings.html once though linked twice, with and without a fragment
    assert ns.libstdcxx_linked_pages(faq_page(), doc_dir) == [
        "manual/status.html",
        "manual/containers.html",
        "manual/strings.html",
    ]
    # single quotes, an upper-case attribute and an entity in the path are read
    odd = "<a HREF='manual/io.html'>x</a><a href=\"manual/str&#105;ngs.html\">y</a>"
    assert ns.libstdcxx_linked_pages(odd, doc_dir) == ["manual/io.html", "manual/strings.html"]


_PAGES = ["io", "strings", "containers", "gone", "a&b"]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["manual", "top", "up", "external", "inpage", "png"]),
            st.sampled_from(_PAGES),
            st.booleans(),  # a fragment
            st.sampled_from(['"', "'"]),
        ),
        max_size=12,
    )
)
def test_libstdcxx_linked_pages_property(
    tmp_path_factory: pytest.TempPathFactory, links: list[tuple[str, str, bool, str]]
) -> None:
    """Random links of every kind (to a manual page that exists or not, written plainly or
    through ``../manual/``, to a top-level page, off-site, in-page, to an image), with or
    without fragments, either quote: exactly the manual pages shipped, each once, in the
    order of the first link to it."""
    doc = tmp_path_factory.mktemp("doc")
    (doc / "manual").mkdir()
    for name in _PAGES:
        if name != "gone":
            (doc / "manual" / f"{name}.html").write_text("<p>x</p>")
        (doc / f"{name}.html").write_text("<p>x</p>")
    page = []
    expected: list[str] = []
    for kind, name, fragment, quote in links:
        target = {
            "manual": f"manual/{name}.html",
            "top": f"{name}.html",
            "up": f"manual/../manual/{name}.html",
            "external": f"https://gcc.gnu.org/{name}.html",
            "inpage": f"#{name}",
            "png": f"manual/{name}.png",
        }[kind]
        href = target.replace("&", "&amp;") + ("#sec" if fragment and kind != "inpage" else "")
        page.append(f"<p><a href={quote}{href}{quote}>{name}</a></p>")
        rel = f"manual/{name}.html"
        if kind in ("manual", "up") and name != "gone" and rel not in expected:
            expected.append(rel)
    assert ns.libstdcxx_linked_pages("".join(page), doc) == expected


def test_libstdcxx_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.libstdcxx_faq_set()
    nsc.assert_package_set(
        nset,
        "libstdcxx-faq",
        ids=list(ANSWERS),
        files={"faq.md", "manual/containers.md", "manual/strings.md"},
        source="faq.md",
        version="12.2.0-14+deb12u1",
        too_long="manual/status.html",
        answers=ANSWERS,
    )
    corpus = " ".join(nset.files.values())
    assert "leftout" not in corpus and "tocline" not in corpus
    # the page quoting a question scrubbed, its other text kept; navigation dropped
    strings = nset.files["manual/strings.md"]
    assert "People ask:" in strings and "It is not." in strings
    assert "Prev" not in strings and "Home" not in strings
    assert (
        strings.startswith("# Strings")
        and "Sequences: list, vector" in nset.files["manual/containers.md"]
    )
    # the pointer to a chapter is too short to judge: left out and named, its question gone
    assert nset.left_out == (Q_SIZE,) and Q_SIZE in nset.note
    assert "## 7. Miscellaneous" in nset.files["faq.md"]


def test_libstdcxx_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = faq_page().replace(
        "<p>Set LD_LIBRARY_PATH, or link with -Wl,-rpath, so that the loader finds "
        "libstdc++.so.</p>",
        "<p>Set LD_LIBRARY_PATH.</p>",
    )
    assert short != faq_page()
    _package(tmp_path, monkeypatch, short)
    nset = ns.libstdcxx_faq_set()
    assert nset.left_out == (Q_PATHS, Q_SIZE) and Q_PATHS in nset.note
    assert len(nset.questions) == len(ANSWERS) - 1
    assert nsc.flat(Q_PATHS) not in nsc.flat(" ".join(nset.files.values()))


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    # the FAQ as shipped: the check finds every question there, so it could fail
    nsc.assert_leak_checked(ns.libstdcxx_faq_set(), {"faq.html": faq_page()}, ASKED, is_html=True)


def test_libstdcxx_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    more = faq_page(
        ENTRIES
        + _q("faq.new", "7.9.", "Why does my program need libstdc++.so.6 at run time?")
        + _a("<p>Because it is linked dynamically unless you pass -static-libstdc++.</p>")
    )
    nsc.assert_halves_survive_an_added_question(
        ns.libstdcxx_faq_set,
        lambda: (doc_dir / ns.LIBSTDCXX_FAQ).write_text(more, encoding="utf-8"),
    )


def test_libstdcxx_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.LIBSTDCXX_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.libstdcxx_faq_set, ns.LIBSTDCXX_FAQ)
