"""Every natural set read from a PyPI sdist (``cython-faq``, ``ansible-faq``, ``falcon-faq``,
``pyx-faq``, ``jupyterhub-faq``, ``leo-faq``), held to one set of checks, and the one reader
they share (``natural_sets._sdist_docs_faq``) on each markup it reads (reStructuredText, MyST
markdown, Sphinx's ``.html.txt.txt`` copies of reStructuredText sources).

Each set's test file declares its small inline sdist and what the set built from it must be
(``SDIST``, a ``natural_set_checks.SdistSet``) and keeps the checks of its own reading (its
splitter on its FAQ); the archive is put in the test's cache (``sdist_archive``), so nothing
is downloaded; offline, no embedding model, no test reads a real sdist.

What every sdist set's numbers rest on: its questions are exactly its FAQ's asking titles in
order, each answer exactly the text under its title and found in its own page; no question
is left in any file; the corpus is the documentation's pages of the set's markup and nothing
else (changelogs, theme folders, snippets, ``conf.py`` and the package's code out), a page
over the limit named; an answer too short to judge leaves the set but not the corpus's
scrubbing; ids are slugs, so an entry added keeps the halves; an sdist without its FAQ is
refused, naming the page. Of the reader: ids counted across pages whatever the markup, each
question found in its own page, a missing FAQ page named.
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import test_natural_set_ansible_faq as ansible
import test_natural_set_cython_faq as cython
import test_natural_set_falcon_faq as falcon
import test_natural_set_jupyterhub_faq as jupyterhub
import test_natural_set_leo_faq as leo
import test_natural_set_pyx_faq as pyx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns

CASES = [cython.SDIST, ansible.SDIST, falcon.SDIST, pyx.SDIST, jupyterhub.SDIST, leo.SDIST]


@pytest.fixture(params=CASES, ids=[c.name for c in CASES])
def case(request: pytest.FixtureRequest) -> nsc.SdistSet:
    """One sdist set's declaration."""
    c: nsc.SdistSet = request.param
    return c


@pytest.fixture
def archive(case: nsc.SdistSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The set's sdist as shipped, in the test's cache, not yet unpacked."""
    return nsc.sdist_archive(case, tmp_path, monkeypatch)


def test_the_set_from_an_sdist(case: nsc.SdistSet, archive: Path) -> None:
    nset = case.build()
    assert nset.name == case.name
    # the FAQ's entries in order, each from its own page
    assert [q.qid for q in nset.questions] == [f"{case.name}:{k}" for k in case.sources]
    assert {q.qid.removeprefix(f"{case.name}:"): q.source for q in nset.questions} == dict(
        case.sources
    )
    # the corpus exactly these files, on disk as the set holds them; no question's text in
    # it; each answer exactly the text under its title, in its page
    assert set(nset.files) == set(case.files)
    nsc.assert_questions_out_answers_in(nset, case.answers)
    nsc.assert_files_as_written(nset)
    nsc.assert_held_out(case.name)
    assert nset.left_out == case.left_out
    # changelogs, theme folders, snippets, conf.py and the package's own files stay out
    assert "leftout" not in " ".join(nset.files.values())
    # the note names the sdist and its version, the page over the limit and what is out
    assert f"over 150000 chars: {case.too_long}" in nset.note
    for said in case.note:
        assert said in nset.note
    case.reads(nset)


def test_the_set_leaves_out_a_short_answer(
    case: nsc.SdistSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages, question = case.short
    assert pages != case.pages
    nsc.sdist_archive(case, tmp_path, monkeypatch, pages)
    # that question alone left out: every other question the FAQ asks stays
    nsc.assert_left_out(case.build(), question, len(case.asked) - 1)


def test_no_question_text_is_left_in_any_file(case: nsc.SdistSet, archive: Path) -> None:
    # the FAQ as shipped: the check finds every question there, so it could fail
    nsc.assert_leak_checked(case.build(), dict(case.shipped), case.asked)


def test_the_sets_halves_are_fixed_and_disjoint(case: nsc.SdistSet, archive: Path) -> None:
    assert all(case.pages[rel] != text for rel, text in case.added.items())

    def add_question() -> None:
        for rel, text in case.added.items():
            (nsc.sdist_doc(case) / rel).write_text(text, encoding="utf-8")

    nsc.assert_halves_survive_an_added_question(case.build, add_question)


REFUSALS = [
    pytest.param(c, gone, missing, id=f"{c.name}-{missing}")
    for c in CASES
    for gone, missing in c.refusals
]


@pytest.mark.parametrize(("sdist", "gone", "missing"), REFUSALS)
def test_the_set_refuses_an_sdist_without_its_faq(
    sdist: nsc.SdistSet,
    gone: tuple[str, ...],
    missing: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    nsc.sdist_archive(sdist, tmp_path, monkeypatch)
    for page in gone:
        (nsc.sdist_doc(sdist) / page).unlink()
    # named, and where it was looked for
    with pytest.raises(FileNotFoundError, match=re.escape(f"no {missing} under ")):
        sdist.build()


# -- the one reader, on each markup -----------------------------------------------------------

Page = Callable[[str, list[tuple[str, str]]], str]
"""A page writer of one markup: (chapter title, [(entry title, text)]) -> the page."""


def _rst_page(chapter: str, entries: list[tuple[str, str]]) -> str:
    """A reStructuredText FAQ page: an overlined chapter title over ``(title, text)``
    entries underlined with ``-``."""
    return pyx.title(chapter, "=", over=True) + "".join(
        "\n" + pyx.title(t, "-") + "\n" + body + "\n" for t, body in entries
    )


def _myst_page(chapter: str, entries: list[tuple[str, str]]) -> str:
    """The same page in MyST markdown: a ``#`` chapter title over ``##`` entries, a target
    before each (``(label)=``, dropped by the reading)."""
    return f"# {chapter}\n" + "".join(
        f"\n(entry-{k})=\n\n## {t}\n\n{body}\n" for k, (t, body) in enumerate(entries)
    )


MARKUPS = [
    pytest.param(ns.RST_DOCS, _rst_page, id="rst"),
    pytest.param(ns.MYST_DOCS, _myst_page, id="myst"),
    pytest.param(ns.LEO_DOCS, _rst_page, id="leo"),
]

_WORD = st.sampled_from(["axis", "canvas", "graph", "tick", "hub", "proxy", "token"])


@pytest.mark.parametrize(("fmt", "page"), MARKUPS)
@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(st.integers(0, 3), st.lists(_WORD, min_size=1, max_size=4)),
            min_size=0,
            max_size=5,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_sdist_docs_faq_property(
    fmt: ns.DocFormat, page: Page, pages: list[list[tuple[int, list[str]]]]
) -> None:
    """Random FAQ pages of either markup, each a chapter title over entries whose question
    text is drawn from four (so that pages repeat questions), each with text of its own,
    beside a page that is no FAQ: every entry asks, in page order; its answer is exactly its
    text, found in its own page (``<page>.md``, whatever the markup); ids are the
    questions' slugs, a repeat anywhere (same page or an earlier one) told apart with
    ``-2``, ``-3``, so no two ids are alike; no question is left in any page; the other
    page read through the markup's conversion."""
    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp)
        (doc / "faq").mkdir()
        faqs: list[str] = []
        expected: list[tuple[str, str, str, str]] = []  # (slug, question, answer, source)
        n = 0
        for p, entries in enumerate(pages):
            written: list[tuple[str, str]] = []
            for which, words in entries:
                question = f"Question number {which} asked here?"
                answer = f"Answer{n}x {' '.join(words)}."
                written.append((question, answer))
                expected.append((ns._slug(question), question, answer, f"faq/p{p}.md"))
                n += 1
            rel = f"faq/p{p}{fmt.suffix}"
            (doc / rel).write_text(page(f"Chapter {p}", written), encoding="utf-8")
            faqs.append(rel)
        (doc / f"guide{fmt.suffix}").write_text(page("Guide", [("Setup", "Run it.")]))
        files, asked, qa, _ = ns._sdist_docs_faq("t", doc, fmt, faqs, (), ("_",), 150_000)
    counts: dict[str, int] = {}
    ids: list[str] = []
    for slug, _, _, _ in expected:
        counts[slug] = counts.get(slug, 0) + 1
        ids.append(slug if counts[slug] == 1 else f"{slug}-{counts[slug]}")
    assert qa == [(k, q, a) for k, (_, q, a, _) in zip(ids, expected, strict=True)]
    assert len(set(ids)) == len(ids)
    assert [(q.qid, q.source) for q in asked] == [
        (f"t:{k}", src) for k, (_, _, _, src) in zip(ids, expected, strict=True)
    ]
    for _, question, answer, src in expected:
        assert answer in files[src]
        assert nsc.flat(question) not in nsc.flat(" ".join(files.values()))
    assert set(files) == {f"faq/p{p}.md" for p in range(len(pages))} | {"guide.md"}
    assert files["guide.md"] == "# Guide\n\n## Setup\n\nRun it.\n"


@pytest.mark.parametrize(("fmt", "page"), MARKUPS)
def test_sdist_docs_faq_names_a_missing_faq_page(
    fmt: ns.DocFormat, page: Page, tmp_path: Path
) -> None:
    (tmp_path / "faq").mkdir()
    (tmp_path / f"faq/a{fmt.suffix}").write_text(page("A", [("Why?", "Because.")]))
    with pytest.raises(FileNotFoundError, match=re.escape(f"no faq/b{fmt.suffix} under")):
        ns._sdist_docs_faq(
            "t", tmp_path, fmt, [f"faq/a{fmt.suffix}", f"faq/b{fmt.suffix}"], (), ("_",), 150_000
        )
