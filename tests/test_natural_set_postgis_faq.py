"""The ``postgis-faq`` natural-question set (``bench/natural_sets.py``), its reading of the
PostGIS manual and the question-leak check (``bench/check_question_leaks.py``) on small
inline pages shaped as Debian's ``postgis-doc`` ships the manual (``postgis.html``, one page
written by the DocBook XSL stylesheets, ISO-8859-1: a title page and the book's contents,
then ``chapter`` divs titled by an ``<h1>`` "Chapter N.", an ``appendix``; qandasets in the
table layout: the generated list of questions, then ``question`` / ``answer`` rows, the
number in bold in the first cell), in a package tree laid out as the package unpacks (marker
present, nothing downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: every question of every qandaset in a kept chapter is a
query (a chapter with two qandasets loses both), its answer exactly its answer row; no
question and no line of the generated lists or the book's contents is left in any file; the
function references, their index and the release notes stay out by label; ids are the part,
the qandaset's place and the question's, so an entry added keeps the halves.
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

HEAD = (
    '<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">'
    '<title>PostGIS 3.3.2 Manual</title></head><body><div class="book"><div class="titlepage">'
    '<h1 class="title">PostGIS 3.3.2 Manual</h1></div><div class="toc"><dl class="toc"><dt>'
    '<a href="#faq">tocline every section</a></dt></dl></div>'
)
FOOT = "</div></body></html>\n"


def qandaset(number: str, entries: list[tuple[str, str | None]]) -> str:
    """One qandaset as the XSL stylesheets write it: the generated list (``listline``
    marks each line), then a table of question rows (number in bold, the question) and
    answer rows (none when the answer is None)."""
    listed = "".join(
        f'<dt>{number}.{n}. <a href="#q{n}">listline {q}</a></dt>'
        for n, (q, _) in enumerate(entries, 1)
    )
    rows = ""
    for n, (q, a) in enumerate(entries, 1):
        rows += (
            f'<tr class="question"><td align="left" valign="top"><a name="q{n}"></a>'
            f'<p><b>{number}.{n}.</b></p></td><td align="left" valign="top"><p>{q}</p>'
            "</td></tr>"
        )
        if a is not None:
            rows += (
                '<tr class="answer"><td align="left" valign="top"></td>'
                f'<td align="left" valign="top"><p>{a}</p></td></tr>'
            )
    return (
        f'<div class="qandaset"><a name="idm{number}"></a><dl>{listed}</dl>'
        f'<table border="0"><tbody>{rows}</tbody></table></div>'
    )


def part(kind: str, label: str, title: str, body: str) -> str:
    word = "Chapter" if kind == "chapter" else "Appendix"
    return (
        f'<div class="{kind}"><div class="titlepage"><div><div><h1 class="title">'
        f'<a name="{kind}{label}"></a>{word}\xa0{label}.\xa0{title}</h1></div></div></div>'
        f"{body}</div>"
    )


Q_ARC = "What is the longest arc you can process?"
Q_INSERT = "How do I insert a GIS object into the database?"
Q_INDEX = "How do I speed up spatial queries on large tables?"
Q_LOAD = "How do I load Raster data into PostGIS?"
A_ARC = "We use great circle arcs as the interpolation line between two points."
A_INSERT = "First create a table with a geometry column, then use ST_GeomFromText to insert."
A_INDEX = "Build a GiST index on the geometry column and run VACUUM ANALYZE afterwards."
A_LOAD = "Use the raster2pgsql loader that comes with the PostGIS raster extension."
A_SECOND = "A second qandaset in the same chapter: its answer stays, its question goes."
Q_SECOND = "Can a chapter hold two lists of questions?"
MANUAL = (
    HEAD
    + part(
        "chapter",
        "4",
        "Data Management",
        "<h2>Geography Advanced FAQ</h2><p>Geography keeps text here.</p>"
        + qandaset("4.3", [(Q_ARC, A_ARC), ("What is missing an answer?", None)]),
    )
    + part("chapter", "8", "PostGIS Reference", "<p>leftout ST_Buffer reference</p>")
    + part(
        "chapter",
        "9",
        "PostGIS Frequently Asked Questions",
        qandaset("9", [(Q_INSERT, A_INSERT), (Q_INDEX, A_INDEX)])
        + "<p>Between the two sets.</p>"
        + qandaset("9.9", [(Q_SECOND, A_SECOND)]),
    )
    + part(
        "chapter",
        "13",
        "PostGIS Raster Frequently Asked Questions",
        qandaset("13", [(Q_LOAD, A_LOAD)]),
    )
    + part("chapter", "15", "PostGIS Special Functions Index", "<p>leftout index</p>")
    + part("appendix", "A", "Appendix", "<p>leftout release notes</p>")
    + FOOT
)
ASKED = (Q_ARC, Q_INSERT, Q_INDEX, Q_SECOND, Q_LOAD)
ANSWERS = {
    "4-1.1": A_ARC,
    "9-1.1": A_INSERT,
    "9-1.2": A_INDEX,
    "9-2.1": A_SECOND,
    "13-1.1": A_LOAD,
}


def test_postgis_manual_parts_questions_answers_and_ids() -> None:
    parts = ns.postgis_manual_parts(MANUAL)
    assert [label for label, _, _ in parts] == ["4", "8", "9", "13", "15", "A"]
    text = "\n".join(t for _, t, _ in parts)
    qa = [entry for _, _, found in parts for entry in found]
    # every qandaset of every chapter (the second one in chapter 9 too); the answer its row
    nsc.assert_split_answers(text, qa, ASKED, ANSWERS)
    # a question with no answer row asks nothing; the section text and titles stay
    assert "Geography keeps text here." in text and "Between the two sets." in text
    assert "PostGIS Frequently Asked Questions" in text
    # the book's contents (before the first part) and the generated lists leave
    assert "listline" not in text and "tocline" not in text
    # a page with no part: nothing
    assert ns.postgis_manual_parts("<p>No chapters here.</p>") == []


_WORD = st.sampled_from(["geometry", "raster", "index", "srid", "gist", "tiger", "topology"])


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.lists(
            st.lists(
                st.tuples(
                    st.lists(_WORD, min_size=1, max_size=5),  # the question's words
                    st.one_of(st.none(), st.lists(_WORD, min_size=1, max_size=6)),  # answer
                ),
                min_size=1,
                max_size=4,
            ),
            min_size=1,
            max_size=3,
        ),  # a chapter's qandasets
        min_size=1,
        max_size=4,
    )
)
def test_postgis_manual_parts_property(
    chapters: list[list[list[tuple[list[str], list[str] | None]]]],
) -> None:
    """Random chapters of random qandasets of random entries (with or without an answer
    row): exactly the entries with an answer ask, in order, ids ``part-set.place`` (the
    place counting every question row), answers their rows; each question gone from the
    page, each answer kept, no generated list left."""
    body = HEAD
    expected: list[tuple[str, str, str]] = []
    for c, sets in enumerate(chapters, 1):
        inner = ""
        for s, entries in enumerate(sets, 1):
            rows: list[tuple[str, str | None]] = []
            for n, (words, answer) in enumerate(entries, 1):
                question = f"q{c}x{s}x{n}z " + " ".join(words) + "?"
                text = None if answer is None else f"a{c}x{s}x{n}z {' '.join(answer)}."
                rows.append((question, text))
                if text is not None:
                    expected.append((f"{c}-{s}.{n}", question, text))
            inner += qandaset(f"{c}.{s}", rows) + f"<p>gap{c}x{s}z</p>"
        body += part("chapter", str(c), f"chaptertitle{c}", inner)
    parts = ns.postgis_manual_parts(body + FOOT)
    qa = [entry for _, _, found in parts for entry in found]
    text = "\n".join(t for _, t, _ in parts)
    assert qa == expected
    for key, _, got in qa:
        assert f"q{key.replace('-', 'x').replace('.', 'x')}z" not in text and got in text
    for c, sets in enumerate(chapters, 1):
        assert f"chaptertitle{c}" in text
        for s in range(1, len(sets) + 1):
            assert f"gap{c}x{s}z" in text
    assert "listline" not in text and "tocline" not in text


# -- the set, built from a package tree shaped like Debian's postgis-doc --------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, manual: str = MANUAL) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.POSTGIS_PACKAGE, "3.3.2+dfsg-1")
    doc: Path = root / ns.POSTGIS_DOC
    doc.mkdir(parents=True)
    (doc / ns.POSTGIS_MANUAL).write_text(manual, encoding="latin-1")
    write_gz(doc / "changelog.gz", "leftout\n")
    write_gz(doc / "NEWS.Debian.gz", "leftout\n")
    (doc / "copyright").write_text("leftout\n")
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (:data:`MANUAL`), the documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_postgis_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.postgis_faq_set()
    assert nset.name == "postgis-faq"
    assert [q.qid for q in nset.questions] == [f"postgis-faq:{k}" for k in ANSWERS]
    assert set(nset.files) == {"chapter-04.md", "chapter-09.md", "chapter-13.md"}
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    assert [q.source for q in nset.questions] == [
        "chapter-04.md",
        "chapter-09.md",
        "chapter-09.md",
        "chapter-09.md",
        "chapter-13.md",
    ]
    nsc.assert_files_as_written(nset)
    assert "3.3.2+dfsg-1" in nset.note
    nsc.assert_held_out("postgis-faq")
    corpus = " ".join(nset.files.values())
    assert "leftout" not in corpus and "listline" not in corpus and "tocline" not in corpus
    assert nset.left_out == ()


def test_postgis_faq_set_names_a_chapter_over_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    huge = MANUAL.replace(
        FOOT, part("chapter", "16", "Huge", "<p>" + "Text. " * 30_000 + "</p>") + FOOT
    )
    _package(tmp_path, monkeypatch, huge)
    nset = ns.postgis_faq_set()
    assert "chapter-16.md" not in nset.files
    assert "over 150000 chars: chapter-16.md" in nset.note


def test_postgis_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = MANUAL.replace(A_LOAD, "Use raster2pgsql.")
    assert short != MANUAL
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.postgis_faq_set(), Q_LOAD, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    # the manual as a browser shows it (tags out, entities read, lines folded): the check
    # finds every question there, so it could fail
    shipped = {"postgis.txt": ns.xboard_heading_text(MANUAL)}
    nsc.assert_leak_checked(ns.postgis_faq_set(), shipped, ASKED)


def test_postgis_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    more = MANUAL.replace(
        qandaset("13", [(Q_LOAD, A_LOAD)]),
        qandaset(
            "13",
            [
                (Q_LOAD, A_LOAD),
                ("Can I export rasters to other formats?", "Yes, with ST_AsGDALRaster and gdal."),
            ],
        ),
    )
    assert more != MANUAL
    nsc.assert_halves_survive_an_added_question(
        ns.postgis_faq_set,
        lambda: (doc_dir / ns.POSTGIS_MANUAL).write_text(more, encoding="latin-1"),
    )


def test_postgis_faq_set_refuses_a_package_without_the_manual(doc_dir: Path) -> None:
    (doc_dir / ns.POSTGIS_MANUAL).unlink()
    nsc.assert_refuses_without_faq(ns.postgis_faq_set, ns.POSTGIS_MANUAL)
