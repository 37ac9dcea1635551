"""The ``dar-faq`` natural-question set (``bench/natural_sets.py``), its reading of dar's
hand-written FAQ page and the question-leak check (``bench/check_question_leaks.py``) on a
small inline page shaped like Debian's ``dar-docs`` ships it
(``/usr/share/doc/dar-docs/FAQ.html``, ISO-8859-1: a title div, a "Questions:" heading, a
"Back to top" jump div, the menu ``<div class=menutop>`` of every question as an in-page
link, then "Answers:" and each entry a bold anchor ``<a name="A2" id="A2"><b>...</b></a><br/>``
over its answer; titles wrapped over lines, one with ``<code>`` inside, one with a link
inside, asked "..., why?" or stated "Path slash and back-slash consideration under
Windows"; answers of paragraphs, ``<code class=block>`` commands, a table, bold-underlined
sub-headings with no anchor, a cross-reference quoting another question; an entry with no
text; a repeated anchor) beside the tree's other pages, the index pages, a translated
mini-howto, a Doxygen page and an over-long page to be left out, in a package tree laid out
as ``dar-docs`` unpacks (marker present, nothing downloaded); offline, no embedding model,
no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
menu, a cross-reference, another page quoting one); each answer is exactly the text under
its anchor up to the next one; ids are the FAQ's anchors, so an added entry keeps the
halves; an answer too short to judge leaves the set but not the corpus's scrubbing.
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

Q_PIPES = "Dar hangs when using it with pipes, why?"
Q_THREE = "Why, when I restore 1 file, dar report 3 files have been restored?"
Q_LIBATTR = (
    "While compiling dar I get the following message: g++: /lib/libattr.a: No such file or "
    "directory, what can I do?"
)
Q_FUSE = "Is there a dar fuse filesystem?"
Q_SLASH = "Path slash and back-slash consideration under Windows"
Q_EMPTY = "Is this entry answered at all?"
Q_TAPES = "How to use dar with tapes (like LTO tapes)?"


def _page(entries: list[tuple[str, str, str]], menu: list[str] | None = None) -> str:
    """A dar FAQ page: (anchor, question HTML, answer HTML) entries; the menu lists
    ``menu`` (the questions, by default) as links into the page."""
    links = "\n".join(
        f'\t<a href="#{a}">{q}</a><br/>'
        for a, q in ([(a, q) for a, q, _ in entries] if menu is None else [("x", m) for m in menu])
    )
    body = "\n".join(
        f'      <a name="{a}" id="{a}"><b>{q}</b></a><br/>\n{ans}\n' for a, q, ans in entries
    )
    return (
        '<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">\n<html>\n  <head>\n'
        '    <meta content="text/html; charset=ISO-8859-1" http-equiv="content-type">\n'
        "    <title>DAR - Frequently Asked Questions</title>\n  </head>\n  <body>\n"
        '    <a name="top">&nbsp;</a>\n    <div class=top>\n'
        '      <img alt="Dar Documentation" src="dar_s_doc.jpg" style="float:left;">\n'
        "      <h1>DAR's - Frequently Asked Questions</h1>\n    </div>\n\n"
        "    <h2>Questions:</h2>\n\n    <div class=jump>\n      <div class=menuitem>\n"
        '\t<a href="#top">Back to top</a>\n      </div>\n    </div>\n\n'
        "    <div class=menutop>\n      <div class=menuitem>\n"
        f"{links}\n      </div>\n    </div>\n\n"
        f"    <div class=maintop>\n      <h2>Answers:</h2>\n{body}    </div>\n  </body>\n</html>\n"
    )


ENTRIES = [
    (
        "A2",
        "Dar hangs when using it with\n\t  pipes, why?",
        "      <p>\n\tDar can produce backups on its standard output, if you give '-' as\n"
        "\tbasename. To feed a backup through pipes use <code>dar_slave</code>.\n      </p>",
    ),
    (
        "A3",
        "Why, when I restore 1 file, dar report 3 files have been restored?",
        "      <p>\n\tIf you restore usr/bin/emacs dar will first restore usr, then usr/bin,\n"
        "\tand last usr/bin/emacs: three inodes. Caf\xe9 owners too.\n      </p>",
    ),
    (
        "libattr",
        "While compiling dar I get the following message: <code>g++: /lib/libattr.a: No "
        "such file or directory</code>, what can I do?",
        "      <p>\n\tThe problem comes from an incoherence in your distro. A workaround is\n"
        "\tto make a symbolic link:\n      </p>\n      <code class=block>\n"
        "\tln -s /usr/lib/libattr.a /lib/libattr.a\n      </code>\n      <br/>",
    ),
    ("empty", Q_EMPTY, ""),
    (
        "fuse",
        'Is there a dar <a href="http://fuse.sourceforge.net/">fuse</a> filesystem?',
        "      <p>\n\tYes, look at dar_fuse, a separate project that mounts a backup.\n"
        f'\tSee also <a href="#A2">{Q_PIPES}</a> for the pipes.\n      </p>',
    ),
    (
        "windows_slash",
        Q_SLASH,
        "      <p><b><u>Under Windows</u></b></p>\n      <p>\n\tUse slashes in paths given "
        "to dar, as under Unix.\n      </p>\n      <div class=table>\n<table>"
        "<tr><th>option</th><th>meaning</th></tr><tr><td>-R</td><td>the root</td></tr>"
        "</table>\n      </div>",
    ),
    (
        "tapes",
        Q_TAPES,
        "      <p>\n\tUse dar_split between dar and the tape device, both ways.\n      </p>",
    ),
]
PAGE = _page(ENTRIES)


def test_split_dar_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_dar_faq(PAGE)
    assert [(k, q) for k, q, _ in qa] == [
        ("A2", Q_PIPES),
        ("A3", Q_THREE),
        ("libattr", Q_LIBATTR),
        ("fuse", Q_FUSE),
        ("windows_slash", Q_SLASH),
        ("tapes", Q_TAPES),
    ]
    answers = {k: a for k, _, a in qa}
    assert nsc.flat(answers["A2"]) == nsc.flat(
        "Dar can produce backups on its standard output, if you give '-' as basename. To feed "
        "a backup through pipes use dar_slave."
    )
    assert nsc.flat(answers["tapes"]) == nsc.flat(
        "Use dar_split between dar and the tape device, both ways."
    )
    assert "ln -s /usr/lib/libattr.a /lib/libattr.a" in answers["libattr"]
    # a bold-underlined sub-heading with no anchor and a table are the answer's text
    assert "Under Windows" in answers["windows_slash"] and "the root" in answers["windows_slash"]
    assert "dar_fuse" in answers["fuse"] and "filesystem" not in answers["fuse"]
    # each answer stops at the next anchor: no neighbour's text in it
    assert "inodes" not in answers["A2"] and "symbolic link" not in answers["A3"]
    assert "dar_split" not in answers["windows_slash"]
    for _, q, a in qa:
        assert a in page
        # the cross-ref: scrubbed later
        assert nsc.flat(q) not in nsc.flat(page.replace(Q_PIPES, ""))
    # the menu goes (every question again), the title and the headings stay
    assert "Back to top" in page  # the jump div is not the menu
    assert "DAR's - Frequently Asked Questions" in page and "Answers:" in page
    assert nsc.flat(page).count(nsc.flat(Q_PIPES)) == 1  # the cross-reference only, no menu line
    # an entry with nothing under it asks nothing and leaves the page all the same
    assert "answered at all" not in page


def test_split_dar_faq_edges() -> None:
    page, none = ns.split_dar_faq("<html><body><h1>dar FAQ</h1><p>Prose, no entry.</p>")
    assert none == [] and "Prose, no entry." in page
    # a bold line with no anchor, and an anchor with no bold title, are answer text
    _, qa = ns.split_dar_faq(
        '<a name="a"><b>Asked here?</b></a><br/>\n<p>Text.</p>\n<p><b>Notes</b></p>\n'
        '<a name="plain">plain anchor</a>\n<p>More.</p>\n'
    )
    assert [(k, q) for k, q, _ in qa] == [("a", "Asked here?")]
    assert "Notes" in qa[0][2] and "plain anchor" in qa[0][2] and "More." in qa[0][2]
    # a repeated anchor gets -2
    _, twice = ns.split_dar_faq(
        '<a name="dup"><b>First one?</b></a><p>One answer here.</p>'
        '<a name="dup"><b>Second one?</b></a><p>Another answer.</p>'
    )
    assert [k for k, _, _ in twice] == ["dup", "dup-2"]
    # a menu with a link out of the page is dropped all the same (it is the menu div)
    page, qa = ns.split_dar_faq(_page(ENTRIES[:1], menu=[Q_PIPES, "Elsewhere"]))
    assert "Elsewhere" not in page and [k for k, _, _ in qa] == ["A2"]


_WORD = st.sampled_from(["slice", "backup", "dar", "catalogue", "isolated", "sftp", "tape"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=0, max_size=8),  # the title's words after the first
            st.booleans(),  # ends with "?"
            st.booleans(),  # wrapped over two lines
            st.lists(_WORD, min_size=0, max_size=20),  # the answer's words (may be none)
        ),
        max_size=8,
    )
)
def test_split_dar_faq_property(entries: list[tuple[list[str], bool, bool, list[str]]]) -> None:
    """Random entries, asked or stated, wrapped or not, some unanswered: one question per
    answered entry, in order, its anchor its id, its answer its text, in the page; no title
    left in it (the menu gone with the entries)."""
    spec = []
    for k, (words, asks, wrapped, awords) in enumerate(entries):
        title_words = [f"entry{k}x", *words]
        sep = "\n\t  " if wrapped else " "
        title = sep.join(title_words) + ("?" if asks else ".")
        answer = " ".join(["Answer", *awords]) if awords else ""
        spec.append((f"anchor{k}", title, f"<p>{answer}</p>" if answer else ""))
    page, qa = ns.split_dar_faq(_page(spec))
    assert [(k, q, a) for k, q, a in qa] == [
        (k, " ".join(t.split()), re.sub("</?p>", "", a)) for k, t, a in spec if a
    ]
    for _, _, a in qa:
        assert a in page
    for _, t, _ in spec:
        assert " ".join(t.split()) not in " ".join(page.split())


# -- the set, built from a package tree shaped like Debian's dar-docs ----------------------


def _doc_page(title: str, body: str) -> str:
    return (
        '<html><head><meta content="text/html; charset=ISO-8859-1" http-equiv="content-type">'
        f"<title>{title}</title></head><body><div class=top><h1>{title}</h1></div>"
        f"<div class=maintop>{body}</div></body></html>\n"
    )


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: str = PAGE) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.DAR_PACKAGE, "2.7.8-2")
    doc: Path = root / ns.DAR_DOC
    doc.mkdir(parents=True)
    (doc / ns.DAR_FAQ).write_bytes(page.encode("latin-1"))
    (doc / "Tutorial.html").write_bytes(
        _doc_page(
            "Tutorial",
            f"<p>People ask: {Q_TAPES} Dar reads and writes slices on tapes with dar_split.</p>"
            "<p>Na\xefve users start with a full backup.</p>",
        ).encode("latin-1")
    )
    (doc / "Limitations.html").write_text(
        _doc_page("Limitations", "<p>Dar cannot handle more than 2^64 slices.</p>")
    )
    (doc / "benchmark_logs.html").write_text(
        _doc_page("Logs", "<pre>" + "real 0m1.5s user 0m1.0s\n" * 7000 + "</pre>")
    )
    (doc / "README").write_text("Dar documentation: open index.html with a browser.\n")
    (doc / "index.html").write_text(_doc_page("Main page", '<a href="FAQ.html">FAQ</a>'))
    (doc / "index_dar.html").write_text(_doc_page("Dar doc", f"<p>{Q_SLASH}</p>"))
    (doc / "dar-differential-backup-mini-howto.es.html").write_text(
        _doc_page("Mini-howto", "<p>C\xf3mo hacer copias diferenciales.</p>"), encoding="utf-8"
    )
    (doc / "NEWS.gz").write_bytes(b"")
    html = doc / "html"
    html.mkdir()
    (html / "annotated.html").write_text(_doc_page("Classes", "<p>libdar::archive</p>"))
    (doc / "dar_s_doc.jpg").write_bytes(b"\xff\xd8\xff")
    return doc


def test_dar_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.dar_faq_set()
    assert [q.qid for q in nset.questions] == [
        f"dar-faq:{k}" for k in ("A2", "A3", "libattr", "fuse", "windows_slash", "tapes")
    ]
    assert set(nset.files) == {"FAQ.md", "Tutorial.md", "Limitations.md", "README"}
    nsc.assert_questions_out_answers_in(nset)
    assert {q.source for q in nset.questions} == {"FAQ.md"}
    # ISO-8859-1 read as such
    assert "Café owners" in nset.files["FAQ.md"] and "Naïve users" in nset.files["Tutorial.md"]
    # the page quoting a question: scrubbed, its other text kept
    assert "Dar reads and writes slices on tapes" in nset.files["Tutorial.md"]
    # the cross-reference in an answer quoting another question: scrubbed, the rest kept
    fuse = next(q for q in nset.questions if q.qid == "dar-faq:fuse").answers[0][0]
    assert "dar_fuse" in fuse and "hangs" not in fuse
    nsc.assert_files_as_written(nset)
    assert "2.7.8-2" in nset.note and "over 150000 chars: benchmark_logs.html" in nset.note
    nsc.assert_held_out("dar-faq")


def test_dar_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = PAGE.replace("Use dar_split between dar and the tape device, both ways.", "dar_split.")
    _package(tmp_path, monkeypatch, short)
    nset = ns.dar_faq_set()
    nsc.assert_left_out(nset, Q_TAPES, 5)


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy, and finds every question in the FAQ page as
    shipped (it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.dar_faq_set()
    asked = nsc.leak_checked(nset, {"faq.md": ns.page_to_markdown(PAGE)})
    assert sorted(asked) == sorted([Q_PIPES, Q_THREE, Q_LIBATTR, Q_FUSE, Q_SLASH, Q_TAPES])


def test_dar_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.dar_faq_set)
    more = _page(
        [
            *ENTRIES,
            (
                "parallel",
                "How to use the full power of my multi-processor computer?",
                "<p>Give dar the -G option with the number of threads to use.</p>",
            ),
        ]
    )
    (doc / ns.DAR_FAQ).write_bytes(more.encode("latin-1"))
    nsc.assert_halves_kept(ns.dar_faq_set, first, dev, test)


def test_dar_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = unpacked_package(tmp_path, monkeypatch, ns.DAR_PACKAGE, "2.7.8-2")
    (root / ns.DAR_DOC).mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match=re.escape("no FAQ.html")):
        ns.dar_faq_set()
