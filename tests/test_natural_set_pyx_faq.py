"""The ``pyx-faq`` natural-question set (``bench/natural_sets.py``): PyX's FAQ, kept as
several reStructuredText pages (``faq/*.rst``), each read by the rule written for Cython's
FAQ (``split_cython_faq``, unchanged) through ``_sdist_docs_faq``, the reference manual's pages
beside it, and the question-leak check (``bench/check_question_leaks.py``), on a small inline
sdist shaped as PyPI's ``pyx-0.18.tar.gz`` ships it (``faq/index.rst``: a title, an
acknowledgements topic and a toctree; chapter pages with an overlined title, entries
underlined with ``=`` straight under it or ``-`` under ``=`` group titles, a stated entry,
internal targets and a footnote, error-message titles that do not ask; ``manual/*.rst`` with
a page quoting a question and one over the limit, the manual's ``.py`` figures and
``conf.py``, the examples' ``.txt`` notes, the package's code); the archive put in the test's
cache, so nothing is downloaded; offline, no embedding model, no test reads the real sdist.

What the set's numbers rest on: the rule chosen for another FAQ carries to every page as it
is (entry titles ending with "?" ask; chapter, group, stated and error-message titles stay);
each question's answer is exactly the text under its title and is found in its own page; no
question is left in any file; only the two books' ``.rst`` pages are in the corpus; ids are
the questions' slugs, unique across pages, so an entry added keeps the halves; an answer too
short to judge leaves the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns

Q_VERSION = "How can I determine the version of PyX running on my machine?"
Q_PYTHON = "Under which versions of Python will PyX run?"
Q_HELP = "Where can I get help if my question is not answered in this FAQ?"
Q_TICKS = "How do I specify the tick increment?"
Q_KEY = "I would like a key for only some of my data sets. How do I do that?"
Q_ROTATE = "How can I rotate text?"
Q_TEX = "What is TeX/LaTeX?"
Q_ENVS = "Why do environments like itemize or eqnarray seem not to work?"
STATED = "The name of the game"
ERROR = "Undefined control sequence ``\\frac``"


def title(text: str, char: str, over: bool = False) -> str:
    """A reStructuredText section title underlined with ``char`` (and overlined)."""
    line = char * len(text)
    return f"{line}\n{text}\n{line}\n" if over else f"{text}\n{line}\n"


INDEX = (
    ".. pyxfaq documentation master file\n\n"
    + title("Some frequently and not so frequently asked questions about PyX", "=")
    + "\n.. topic:: Acknowledgements\n\n   Several persons contributed to this FAQ.\n\n"
    ".. toctree::\n   :maxdepth: -1\n\n   general_aspects_pyx\n   plotting_graphs\n"
)
GENERAL = (
    title("General aspects of PyX", "=", over=True)
    + "\n"
    + title(STATED, "=")
    + "\nOriginally, the name PyX was constructed from PostScript, Python and TeX [#tb]_.\n\n"
    + title(Q_VERSION, "=")
    + "\nStart a python session and type ``pyx.__version__``.\n\n"
    ".. _python_requirements:\n\n"
    + title(Q_PYTHON, "=")
    + "\nStarting with version 0.13, PyX requires Python 3.2 or higher.\n\n"
    + title(Q_HELP, "=")
    + "\nThe PyX sources contain a reference manual and a set of examples.\n\n"
    ".. [#tb] D. Knuth, *The TeX book*\n"
)
GRAPHS = (
    title("Plotting of graphs", "=", over=True)
    + "\n"
    + title("Axis properties", "=")
    + "\n"
    + title(Q_TICKS, "-")
    + "\nIn the simplest case, you have a linear axis: ``graph.axis.linear(min=0, max=10)``.\n\n"
    + title(Q_KEY, "-")
    + "\nAn example taken from the examples is discussed in the graph key section.\n\n"
    + title("Data properties", "=")
    + "\n"
    + title("How do I choose the symbol and its attributes?", "-")
    + "\nUse ``graph.style.symbol`` with a symbol and its attributes.\n\n"
    + title(Q_HELP, "-")
    + "\nAsk on the pyx-user mailing list about plotting graphs.\n"
)
OTHER = (
    title("Other plotting tasks", "=", over=True)
    + "\n"
    + title(Q_ROTATE, "=")
    + "\nText can be rotated by an arbitrary angle using ``trafo.rotate``.\n"
)
TEX = (
    title("TeX and LaTeX", "=", over=True)
    + "\n"
    + title("General aspects", "=")
    + "\n"
    + title(Q_TEX, "-")
    + "\nTeX is a typesetting system designed by Donald E. Knuth.\n\n"
    + title("TeX and LaTeX errors", "=")
    + "\n"
    + title(ERROR, "-")
    + "\nThe command ``\\frac`` is only available in LaTeX, not in plain TeX.\n\n"
    + title("Why do environments like ``itemize`` or ``eqnarray`` seem not to work?", "-")
    + "\nThese environments need a paragraph box: use ``text.parbox``.\n"
)
PAGES = {
    "faq/index.rst": INDEX,
    "faq/general_aspects_pyx.rst": GENERAL,
    "faq/other_plotting.rst": OTHER,
    "faq/plotting_graphs.rst": GRAPHS,
    "faq/tex_latex.rst": TEX,
}
ANSWERS = {
    # the pages are read in sorted order: general, other, graphs, tex
    "how-can-i-determine-the-version-of-pyx-r": (
        "Start a python session and type ``pyx.__version__``."
    ),
    "under-which-versions-of-python-will-pyx-": (
        "Starting with version 0.13, PyX requires Python 3.2 or higher."
    ),
    "where-can-i-get-help-if-my-question-is-n": (
        "The PyX sources contain a reference manual and a set of examples.\n\n"
        ".. [#tb] D. Knuth, *The TeX book*"
    ),
    "how-can-i-rotate-text": ("Text can be rotated by an arbitrary angle using ``trafo.rotate``."),
    "how-do-i-specify-the-tick-increment": (
        "In the simplest case, you have a linear axis: ``graph.axis.linear(min=0, max=10)``."
    ),
    "i-would-like-a-key-for-only-some-of-my-d": (
        "An example taken from the examples is discussed in the graph key section."
    ),
    "how-do-i-choose-the-symbol-and-its-attri": (
        "Use ``graph.style.symbol`` with a symbol and its attributes."
    ),
    # the same question on a second page: its slug again, told apart
    "where-can-i-get-help-if-my-question-is-n-2": (
        "Ask on the pyx-user mailing list about plotting graphs."
    ),
    "what-is-tex-latex": "TeX is a typesetting system designed by Donald E. Knuth.",
    "why-do-environments-like-itemize-or-eqna": (
        "These environments need a paragraph box: use ``text.parbox``."
    ),
}
SOURCES = {
    "how-can-i-determine-the-version-of-pyx-r": "faq/general_aspects_pyx.md",
    "under-which-versions-of-python-will-pyx-": "faq/general_aspects_pyx.md",
    "where-can-i-get-help-if-my-question-is-n": "faq/general_aspects_pyx.md",
    "how-can-i-rotate-text": "faq/other_plotting.md",
    "how-do-i-specify-the-tick-increment": "faq/plotting_graphs.md",
    "i-would-like-a-key-for-only-some-of-my-d": "faq/plotting_graphs.md",
    "how-do-i-choose-the-symbol-and-its-attri": "faq/plotting_graphs.md",
    "where-can-i-get-help-if-my-question-is-n-2": "faq/plotting_graphs.md",
    "what-is-tex-latex": "faq/tex_latex.md",
    "why-do-environments-like-itemize-or-eqna": "faq/tex_latex.md",
}
ASKED = [
    Q_VERSION,
    Q_PYTHON,
    Q_HELP,
    Q_ROTATE,
    Q_TICKS,
    Q_KEY,
    "How do I choose the symbol and its attributes?",
    Q_HELP,
    Q_TEX,
    Q_ENVS,
]


def test_the_cython_rule_reads_a_pyx_chapter() -> None:
    text, qa = ns.split_cython_faq(GENERAL)
    # the entry titles ending with "?" straight under the overlined chapter title ask; the
    # answer runs to the next title (a target before it dropped, a footnote after the last
    # one kept in its answer)
    nsc.assert_split_answers(
        text,
        qa,
        [Q_VERSION, Q_PYTHON, Q_HELP],
        {k: ANSWERS[k] for k in list(ANSWERS)[:3]},
    )
    # the chapter title and the stated entry (with its text) stay
    assert text.startswith(f"# General aspects of PyX\n\n## {STATED}\n\nOriginally, the name")
    assert ".. _" not in text and "===" not in text
    # group titles under "=" over entries under "-"; an error-message title does not ask and
    # stays with its text
    text, qa = ns.split_cython_faq(TEX)
    assert [q for _, q, _ in qa] == [Q_TEX, Q_ENVS]
    assert "## General aspects" in text and "## TeX and LaTeX errors" in text
    assert f"### {ERROR}\n\nThe command ``\\frac`` is only available" in text


def test_sdist_docs_faq_reads_several_pages_and_keeps_ids_unique(tmp_path: Path) -> None:
    for rel, body in PAGES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(body, encoding="utf-8")
    (tmp_path / "manual").mkdir()
    (tmp_path / "manual/graph.rst").write_text(title("Graphs", "=") + "\nPlots.\n")
    faqs = sorted(rel for rel in PAGES if rel != "faq/index.rst")
    files, asked, qa, too_long = ns._sdist_docs_faq(
        "t", tmp_path, ns.RST_DOCS, faqs, (), ("_",), 150_000
    )
    # every question of every page, in page order, the repeated one told apart; each
    # found in its own page, which holds its answer and no longer its question
    assert [k for k, _, _ in qa] == list(ANSWERS)
    assert [q.text for q in asked] == ASKED
    assert {q.qid.removeprefix("t:"): q.source for q in asked} == SOURCES
    for q in asked:
        assert q.answers == ((ANSWERS[q.qid.removeprefix("t:")], 1.0),)
        assert q.answers[0][0] in files[q.source]
        assert nsc.flat(q.text) not in nsc.flat(files[q.source])
    # the front page (not an FAQ page here) and the manual as markdown; nothing too long
    assert set(files) == {rel.removesuffix(".rst") + ".md" for rel in PAGES} | {"manual/graph.md"}
    assert "\n# Some frequently and not so frequently" in files["faq/index.md"]
    assert too_long == []
    # one page: the ids its splitter gave, as the one-page reader always read them
    one = ns._sdist_docs_faq(
        "t", tmp_path, ns.RST_DOCS, ["faq/plotting_graphs.rst"], (), ("_",), 150_000
    )
    assert [k for k, _, _ in one[2]] == [k for k, _, _ in ns.split_cython_faq(GRAPHS)[1]]
    assert one[2][-1][0] == "where-can-i-get-help-if-my-question-is-n"


# -- the set, built from an sdist shaped like PyPI's pyx-0.18.tar.gz --------------------------
# (the checks every sdist set shares run in test_natural_set_sdists.py on SDIST)


def _reads(nset: ns.NaturalSet) -> None:
    # a manual page quoting a question scrubbed, its other text kept
    graph = nset.files["manual/graph.md"]
    assert graph.startswith("# Graphs\n\nUsers often ask:") and "Read on." in graph
    assert "## Axes\n\nAn axis maps" in graph
    # the stated entry and the error-message title stay with their text
    assert f"## {STATED}\n\nOriginally" in nset.files["faq/general_aspects_pyx.md"]
    assert f"### {ERROR}\n\nThe command" in nset.files["faq/tex_latex.md"]


SDIST = nsc.SdistSet(
    name="pyx-faq",
    build=ns.pyx_faq_set,
    project=ns.PYX_PROJECT,
    version=ns.PYX_VERSION,
    doc=ns.PYX_DOC,
    pages=PAGES,
    members={
        "faq/conf.py": "leftout = 1\n",
        "faq/Makefile": "leftout:\n",
        "manual/graph.rst": title("Graphs", "=")
        + f"\nUsers often ask: {Q_TICKS} Read on.\n\n"
        + title("Axes", "-")
        + "\nAn axis maps data to the graph.\n",
        "manual/huge.rst": title("Huge", "=") + "\n" + "Notes. " * 25_000 + "\n",
        "manual/graph.py": "leftout = 1\n",
        "manual/conf.py": "leftout = 1\n",
        "examples/graphs/minimal.txt": "leftout\n",
        "README.md": "leftout\n",
        "CHANGES": "leftout\n",
        "pyx/canvas.py": "leftout = 1\n",
    },
    sources=SOURCES,
    answers=ANSWERS,
    # the FAQ's pages and the manual's .rst pages, nothing else (the manual's figures,
    # conf.py, Makefiles, the examples' notes, the package's code)
    files={rel.removesuffix(".rst") + ".md" for rel in PAGES} | {"manual/graph.md"},
    too_long="manual/huge.rst",
    left_out=(),
    note=("PyPI sdist pyx 0.18", "5 reStructuredText pages"),
    asked=ASKED,
    shipped={rel: ns.rst_plain(body) for rel, body in PAGES.items()},
    short=(
        {
            **PAGES,
            "faq/other_plotting.rst": OTHER.replace(
                "Text can be rotated by an arbitrary angle using ``trafo.rotate``.", "Use a trafo."
            ),
        },
        Q_ROTATE,
    ),
    added={
        "faq/other_plotting.rst": OTHER
        + "\n"
        + title("How can I clip a canvas?", "=")
        + "\nInsert a ``canvas.clip`` path.\n"
    },
    # every FAQ page gone: the set names the folder's pattern
    refusals=[(tuple(PAGES), "faq/*.rst")],
    reads=_reads,
)
