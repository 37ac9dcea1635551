"""The ``petsc-faq`` natural-question set (``bench/natural_sets.py``): PETSc's FAQ, read from the
copy Sphinx keeps of its reStructuredText source in Debian's ``petsc3.18-doc``
(``usr/share/doc/petsc3.18-doc/docs/_sources/faq/index.rst.txt``) by the rule written for
Cython's (``split_cython_faq``, unchanged, through ``_sdist_docs_faq``), the docs' other
pages beside it, and the question-leak check (``bench/check_question_leaks.py``), on a small
package tree shaped as the package unpacks (the FAQ: a label, a title over- and underlined
with ``=``, a local contents directive, transitions of dashes between the groups (the same
character the question titles are underlined with), group titles under ``=``, one labelled,
question titles under ``-``, one labelled, one with two questions, one stating a problem
before its question, answers with code blocks and a sub-section; beside it the docs' other
``_sources`` pages, one quoting a question and one over the limit, the API man pages and the
release notes (left out), the built HTML and Sphinx's assets); offline, no embedding model,
no test reads the real package.

What the set's numbers rest on: the rule chosen for another FAQ carries to this one as it is
(the titles that ask are questions, the page and group titles stay, a transition made of the
question titles' own character is never read as a title); pages named ``<page>.rst.txt``
are read as the other sets read ``<page>.rst``; the man pages, the release notes and
everything that is not such a page stay out of the corpus; no question is left in any file;
ids are the questions' slugs, so an entry added keeps the halves; an answer too short to
judge leaves the set but not the corpus's scrubbing.
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

Q_LISTS = "How can I subscribe to the PETSc mailing lists?"
Q_PARALLEL = (
    "What kind of parallel computers are needed to use PETSc? Or why do I get little speedup?"
)
Q_MPI = "Why do you use MPI?"
Q_ASSEMBLY = (
    "Assembling large sparse matrices takes a long time. What can I do to make this faster?"
)
Q_HANGING = "How do I see where my code is hanging?"
Q_SHARED = "Can I install PETSc libraries as shared libraries?"
TRANSITION = "-" * 50


def title(text: str, char: str, over: bool = False) -> str:
    """A reStructuredText section title underlined (and, with ``over``, overlined) with
    ``char``, as long as the title."""
    line = char * max(len(text), 3)
    return (f"{line}\n" if over else "") + f"{text}\n{line}\n"


FAQ = (
    ".. _doc_faq:\n\n"
    + title("FAQ", "=", over=True)
    + "\n.. contents:: Table Of Contents\n   :local:\n   :backlinks: top\n\n"
    + f"{TRANSITION}\n\n"
    + title("General", "=")
    + "\n"
    + title(Q_LISTS, "-")
    + "\nSee the mailing list page and write to petsc-users with your question.\n\n"
    ".. _doc_faq_general_parallel:\n\n"
    + title(Q_PARALLEL, "-")
    + "\nThe speed of sparse solvers is bound by memory bandwidth, not by the processor.\n\n"
    + title("Memory bandwidth", "~")
    + "\nRun the streams benchmark to see how much bandwidth each core gets.\n\n"
    + f"{TRANSITION}\n\n"
    + title("Installation", "=")
    + "\n"
    + title(Q_MPI, "-")
    + "\nMPI is the message passing standard every parallel machine supports.\n\n"
    + f"{TRANSITION}\n\n"
    + title("Usage", "=")
    + "\n"
    + title(Q_ASSEMBLY, "-")
    + "\nPreallocate the matrix; run with -info to see the mallocs during assembly.\n\n"
    + title(Q_HANGING, "-")
    + "\nAttach a debugger to every process:\n\n"
    ".. code-block:: console\n\n   $ mpiexec -n 4 ./ex1 -start_in_debugger\n\n"
    + f"{TRANSITION}\n\n"
    ".. _doc_faq_sharedlibs:\n\n"
    + title("Shared Libraries", "=")
    + "\n"
    + title(Q_SHARED, "-")
    + "\nYes. Use\n\n.. code-block:: console\n\n   $ ./configure --with-shared-libraries\n"
)
ASKED = [Q_LISTS, Q_PARALLEL, Q_MPI, Q_ASSEMBLY, Q_HANGING, Q_SHARED]
ANSWERS = {
    "how-can-i-subscribe-to-the-petsc-mailing": (
        "See the mailing list page and write to petsc-users with your question."
    ),
    "what-kind-of-parallel-computers-are-need": (
        "The speed of sparse solvers is bound by memory bandwidth, not by the processor.\n\n"
        "#### Memory bandwidth\n\n"
        "Run the streams benchmark to see how much bandwidth each core gets."
    ),
    "why-do-you-use-mpi": "MPI is the message passing standard every parallel machine supports.",
    "assembling-large-sparse-matrices-takes-a": (
        "Preallocate the matrix; run with -info to see the mallocs during assembly."
    ),
    "how-do-i-see-where-my-code-is-hanging": (
        "Attach a debugger to every process:\n\n"
        ".. code-block:: console\n\n   $ mpiexec -n 4 ./ex1 -start_in_debugger"
    ),
    "can-i-install-petsc-libraries-as-shared-": (
        "Yes. Use\n\n.. code-block:: console\n\n   $ ./configure --with-shared-libraries"
    ),
}


def test_the_cython_rule_reads_petscs_faq() -> None:
    text, qa = ns.split_cython_faq(FAQ)
    # every question title asks (a second question or a stated problem before the "?" is
    # part of it); its answer runs to the next question, group title or page end, its own
    # "~" sub-section included
    nsc.assert_split_answers(text, qa, ASKED, ANSWERS)
    # the page title and the group titles stay; the transitions of dashes between groups
    # (the question titles' own underline character) are dropped, never read as titles
    assert text.startswith("# FAQ\n\n.. contents:: Table Of Contents")
    for kept in ("## General", "## Installation", "## Usage", "## Shared Libraries"):
        assert kept in text
    assert "-----" not in text and "=====" not in text
    # the labels before a question or a group go with the other link targets
    assert ".. _doc_faq" not in text


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=4),
        min_size=1,
        max_size=4,
    )
)
def test_every_question_title_asks_and_no_transition_is_a_title(
    groups: list[list[tuple[bool, bool]]],
) -> None:
    # random groups between transitions, each with question titles under "-", some labelled,
    # some stating a problem before the question; every one asks, every group title stays
    page = title("FAQ", "=", over=True) + "\n"
    expected: list[tuple[str, str, str]] = []
    for g, entries in enumerate(groups, start=1):
        page += f"{TRANSITION}\n\n" + title(f"Group{g}x", "=") + "\n"
        for e, (labelled, stated) in enumerate(entries, start=1):
            asked = (f"Slow{g}n{e}x is slow. " if stated else "") + f"Why q{g}n{e}x?"
            answer = f"Answer a{g}n{e}x in a few plain words."
            label = f".. _label_{g}_{e}:\n\n" if labelled else ""
            page += label + title(asked, "-") + f"\n{answer}\n\n"
            expected.append((ns._slug(asked), asked, answer))
    text, qa = ns.split_cython_faq(page)
    assert qa == expected
    for g in range(1, len(groups) + 1):
        assert f"## Group{g}x" in text
    for _, asked, answer in expected:
        assert asked not in text and answer in text
    assert "---" not in text and ".. _label" not in text


# -- the set, built from a package tree shaped like Debian's petsc3.18-doc ----------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    """The package tree in a benchmark cache at ``tmp_path``; returns the ``_sources``
    folder."""
    root = unpacked_package(tmp_path, monkeypatch, ns.PETSC_PACKAGE, "3.18.5+dfsg1-1")
    src: Path = root / ns.PETSC_DOC
    pages = {
        ns.PETSC_FAQ: faq,
        "docs/manual/ksp.rst.txt": title("KSP: Linear System Solvers", "-")
        + f"\nUsers often ask: {Q_HANGING} Read the FAQ.\n\n"
        + title("Preconditioners", "~")
        + "\nThe preconditioner is set with KSPGetPC() and PCSetType().\n",
        "install/install.rst.txt": title("Configuring PETSc", "=", over=True)
        + "\nRun ./configure with the options your machine needs.\n",
        "docs/manual/tao.rst.txt": title("TAO: Optimization Solvers", "-")
        + "\n"
        + "Solvers. " * 20_000
        + "\n",
        "docs/manualpages/KSP/KSPSolve.rst.txt": title("KSPSolve", "=") + "\nleftout\n",
        "docs/changes/318.rst.txt": title("Changes: 3.18", "=") + "\nleftout\n",
    }
    for rel, body in pages.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(body, encoding="utf-8")
    docs = src.parent
    for rel in ("faq/index.html", "_static/basic.css", "objects.inv", "docs/manual/ksp.html"):
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text("leftout\n", encoding="utf-8")
    (src / "faq/notes.txt").write_text("leftout\n", encoding="utf-8")
    (root / "usr/share/doc/petsc3.18-doc/copyright").write_text("leftout\n", encoding="utf-8")
    return src


@pytest.fixture
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (:data:`FAQ`), the ``_sources`` folder."""
    return _package(tmp_path, monkeypatch)


def test_petsc_faq_set_from_a_package_tree(sources: Path) -> None:
    nset = ns.petsc_faq_set()
    # the pages named <page>.rst.txt, as <page>.md: the FAQ and the other pages but the man
    # pages and the release notes (and not the HTML, Sphinx's assets, a stray .txt)
    nsc.assert_package_set(
        nset,
        "petsc-faq",
        ids=list(ANSWERS),
        files={"faq/index.md", "docs/manual/ksp.md", "install/install.md"},
        source="faq/index.md",
        version="3.18.5+dfsg1-1",
        too_long="docs/manual/tao.rst.txt",
        answers=ANSWERS,
    )
    assert nset.left_out == ()
    assert "leftout" not in " ".join(nset.files.values())
    # the other pages as markdown; a page quoting a question scrubbed, its other text kept
    assert nset.files["install/install.md"].startswith("# Configuring PETSc\n\nRun ./configure")
    ksp = nset.files["docs/manual/ksp.md"]
    assert "# KSP: Linear System Solvers\n\nUsers often ask:" in ksp and "Read the FAQ." in ksp
    assert "## Preconditioners\n\nThe preconditioner" in ksp
    assert "petsc3.18-doc 3.18.5+dfsg1-1" in nset.note
    assert "docs/manualpages/, docs/changes/ out" in nset.note
    assert "6 questions deleted" in nset.note and "(2 files;" in nset.note


def test_petsc_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "MPI is the message passing standard every parallel machine supports.", "It is standard."
    )
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.petsc_faq_set(), Q_MPI, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(sources: Path) -> None:
    # the FAQ as shipped: the check finds every question there, so it could fail
    nset = ns.petsc_faq_set()
    shipped = {"faq.txt": ns.rst_plain(FAQ)}
    nsc.assert_leak_checked(nset, shipped, ASKED)


def test_petsc_faq_set_halves_are_fixed_and_disjoint(sources: Path) -> None:
    added = (
        title("How do I turn off PETSc signal handling?", "-")
        + "\nRun the program with the option -no_signal_handler.\n\n"
    )
    more = FAQ.replace(title(Q_HANGING, "-"), added + title(Q_HANGING, "-"))
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.petsc_faq_set, lambda: (sources / ns.PETSC_FAQ).write_text(more, encoding="utf-8")
    )


def test_petsc_faq_set_refuses_a_package_without_the_faq(sources: Path) -> None:
    (sources / ns.PETSC_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.petsc_faq_set, ns.PETSC_FAQ)
