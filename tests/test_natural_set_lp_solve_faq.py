"""The ``lp-solve-faq`` natural-question set (``bench/natural_sets.py``), its reading of
lp_solve's FAQ and the question-leak check (``bench/check_question_leaks.py``) on a small
inline FAQ shaped as Debian's ``lp-solve-doc`` ships it (``FAQ.htm``: hand-written HTML in
ISO-8859-1 inside a layout table, an ``<h1>`` title, entries ``- <b>question</b>`` opening a
line, some wrapped, one holding a link, one answered after ``</p>`` in a ``<pre>`` block, a
bold word inside an answer, a ``- <b>`` run in mid-line, an entry with no text) beside the
reference guide's pages (an API-function page, the command's page quoting a question, an
over-long page; the frameset, contents, search, licence, release notes, the per-environment
driver manuals, the javadoc and the changelogs to be left out) and the folder's README, in
a package tree laid out as ``lp-solve-doc`` unpacks (marker present, nothing downloaded);
offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file; each answer is
exactly the text after its question up to the next one; a wrapped question is read whole,
its link's text kept; ids are the questions' slugs, so an added entry keeps the halves; an
answer too short to judge leaves the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package

Q_LATEST = "Where can I find the latest version of lp_solve?"
Q_CITE = "How should lp_solve be cited when I use it?"
Q_BOUNDS = "What are the default bounds on variables?"
Q_VERBOSE = (
    "When I call the API call solve(), several messages are printed on screen. How can I "
    "disable those messages?"
)
Q_SLOW = (
    "lp_solve fails to solve my model or it takes a very long time to solve my model. "
    "What can I do?"
)
Q_IDE = "Is there no more user-friendly interface than the lp_solve command line program?"
ASKED = (Q_LATEST, Q_CITE, Q_BOUNDS, Q_VERBOSE, Q_SLOW, Q_IDE)

FAQ = """<html><HEAD><TITLE>lp_solve Frequently Asked Questions</TITLE></HEAD>
\t<BODY><TABLE ID="Table1"><TR><TD VALIGN="top">
\t\t<h1 align="left"><u>lp_solve Frequently Asked Questions</u></h1>
\t\t<P>
\t\t\t- <b>Where can I find the latest version of lp_solve?</b><br>
\t\t\tThere is a yahoo group that bundles all activities of the lp_solve community.</P>
\t\t<p>
\t\t\t- <b>How should lp_solve be cited when I use it?</b></p>
\t\t<pre>
Official name   : lp_solve (alternatively lpsolve)
Co-developers   : Michel Berkelaar, Kjell Eikland</pre>
\t\tThis text is also in citations.txt
\t\t<p>
\t\t\t- <b>What are the default bounds on variables?</b><br>
\t\t\tThe default lower bound is <b>zero</b> and the upper bound is infinite.
\t\t\tSee also: it - <b>is not</b> a question here.</p>
\t\t<p>
\t\t\t- <b>Is this entry answered at all?</b></p>
\t\t<p>
\t\t\t- <b>When I call the API call solve(), several messages are printed on screen. How can I
\t\t\tdisable those messages?</b><br>
\t\t\tUse the <a href="set_verbose.htm">set_verbose</a> API call. Caf\xe9 IMPORTANT (3).</p>
\t\t<p>
\t\t\t- <b>lp_solve fails to solve my model or it takes a very long time to solve my model.
\t\t\tWhat can I do?</b><br>
\t\t\tlp_solve has a lot of options. Consider to use the following:</p>
\t\t<ul><li>Use the LUSOL bfp.</li><li>Use scaling.</li></ul>
\t\t<p>
\t\t    - <b>Is there no more user-friendly interface than the <a href="lp_solve.htm">lp_solve
\t\t    command</a> line program?</b><br>
\t\t\tYes there is. See <a href="IDE.htm">LPSolve IDE</a> for more information.</p>
\t</TD></TR></TABLE></BODY></html>
"""
ANSWERS = {
    "where-can-i-find-the-latest-version-of-l": (
        "There is a yahoo group that bundles all activities of the lp_solve community."
    ),
    "how-should-lp-solve-be-cited-when-i-use-": (
        "```\n\nOfficial name   : lp_solve (alternatively lpsolve)\n"
        "Co-developers   : Michel Berkelaar, Kjell Eikland\n```\n\n"
        " This text is also in citations.txt"
    ),
    "what-are-the-default-bounds-on-variables": (
        "The default lower bound is zero and the upper bound is infinite. "
        "See also: it - is not a question here."
    ),
    "when-i-call-the-api-call-solve-several-m": (
        "Use the set_verbose API call. Caf\xe9 IMPORTANT (3)."
    ),
    "lp-solve-fails-to-solve-my-model-or-it-t": (
        "lp_solve has a lot of options. Consider to use the following:\n\n"
        "- Use the LUSOL bfp.\n\n- Use scaling."
    ),
    "is-there-no-more-user-friendly-interface": (
        "Yes there is. See LPSolve IDE for more information."
    ),
}


def test_split_lp_solve_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_lp_solve_faq(FAQ)
    # wrapped questions whole, the link's text kept
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    assert "answered at all" not in page  # an entry with nothing under it asks nothing
    assert "\n# lp_solve Frequently Asked Questions\n" in page  # the title, in no answer
    assert all("Frequently" not in a for *_, a in qa)


def test_split_lp_solve_faq_edges() -> None:
    # a "- <b>" run in mid-line, one without "-", one holding another <b>, and an unclosed
    # one are text (the markers are gone, the words stay); a repeated question gets -2
    page, qa = ns.split_lp_solve_faq(
        "<p>\n - <b>One?</b> A.\n x - <b>Not here?</b> B.</p>\n<p>\n<b>Nor here?</b> C.\n"
        "- <b>Unclosed <b>inner?</b> D.</p>\n<p>\n\t-\t<B>One?</B> E.\n-<b>Open? F.</p>\n"
    )
    assert qa == [
        ("one", "One?", "A. x - Not here? B.\n\n Nor here? C. - Unclosed inner? D."),
        ("one-2", "One?", "E. -Open? F."),
    ]
    assert page == "A. x - Not here? B.\n\n Nor here? C. - Unclosed inner? D.\n\nE. -Open? F.\n"
    page, none = ns.split_lp_solve_faq("<h1>lp_solve</h1><p>No entry - <b>here</b>.</p>")
    assert none == [] and page == "# lp_solve\n\nNo entry - here.\n"


_WORD = st.sampled_from(["bound", "variable", "model", "simplex", "dll", "lp", "mps"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=10),  # the question's words
            st.integers(min_value=1, max_value=6),  # words on the question's first line
            st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
            st.booleans(),  # the answer after </p> rather than after <br>
        ),
        max_size=8,
    )
)
def test_split_lp_solve_faq_property(entries: list[tuple[list[str], int, list[str], bool]]) -> None:
    """Random entries, wrapped or not, some unanswered, answered inside the question's
    paragraph or after it: one question per answered entry, in order, its answer its text,
    in the page; no question's marker word left in it."""
    parts = ["<h1>lp_solve Frequently Asked Questions</h1>"]
    expected: list[tuple[str, str]] = []
    for k, (qwords, cut, awords, after) in enumerate(entries):
        words = [f"entry{k}x", *qwords]
        head = " ".join(words[:cut]) + ("\n\t\t" + " ".join(words[cut:]) if words[cut:] else "")
        answer = " ".join(["Answer", *awords]) if awords else ""
        glue = "</p>\n<p>" if after else "<br>\n\t\t"
        parts.append(f"<p>\n\t\t- <b>{head}?</b>{glue}{answer}</p>")
        if answer:
            expected.append((" ".join(words) + "?", answer))
    page, qa = ns.split_lp_solve_faq("\n".join(parts))
    assert [(q, a) for _, q, a in qa] == expected
    for _, _, a in qa:
        assert a in page
    assert "entry" not in page


# -- the set, built from a package tree shaped like Debian's lp-solve-doc -------------------

LEFT_OUT = (
    "index.htm",
    "contents.htm",
    "search.htm",
    "LGPL.htm",
    "changes55.htm",
    "MATLAB.htm",
    "Python.htm",
    "R.htm",
)


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.LP_SOLVE_PACKAGE, "5.5.2.5-2")
    doc: Path = root / ns.LP_SOLVE_DOC
    doc.mkdir(parents=True)
    (doc / ns.LP_SOLVE_FAQ).write_bytes(faq.encode("latin-1"))
    (doc / "set_verbose.htm").write_bytes(
        b"<h1>set_verbose</h1><p>Set the verbose level. NORMAL (4) is the default.</p>"
    )
    (doc / "lp_solve.htm").write_text(
        f"<h1>lp_solve command</h1><p>{Q_BOUNDS} Zero and infinity; -e epsilon.</p>"
    )
    (doc / "formulate.htm").write_text("<p>" + "Formulate a model. " * 8000 + "</p>")
    for name in LEFT_OUT:
        (doc / name).write_text("<p>left out of the corpus</p>")
    (doc / "Java/docs/api").mkdir(parents=True)
    (doc / "Java/docs/api/index.html").write_text("<p>javadoc</p>")
    (doc / "index.html").write_text("<frameset></frameset>")
    with gzip.open(doc / "README.txt.gz", "wt", encoding="utf-8") as fh:
        fh.write("Introduction\n------------\nlp_solve is a MILP solver.\n")
    with gzip.open(doc / "changelog.Debian.gz", "wt", encoding="utf-8") as fh:
        fh.write("left out\n")
    (doc / "copyright").write_text("left out\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), its documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_lp_solve_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.lp_solve_faq_set()
    nsc.assert_package_set(
        nset,
        "lp-solve-faq",
        ids=list(ANSWERS),
        files={"FAQ.md", "set_verbose.md", "lp_solve.md", "README.txt"},
        source="FAQ.md",
        version="5.5.2.5-2",
        too_long="formulate.htm",
        answers=ANSWERS,
    )
    assert "Caf\xe9 IMPORTANT" in nset.files["FAQ.md"]  # ISO-8859-1 read as such
    # a page quoting a question: scrubbed, its other text kept
    assert "Zero and infinity; -e epsilon." in nset.files["lp_solve.md"]
    assert "left out of the corpus" not in " ".join(nset.files.values())


def test_lp_solve_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "There is a yahoo group that bundles all activities of the lp_solve community.",
        "The yahoo group.",
    )
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.lp_solve_faq_set(), Q_LATEST, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.lp_solve_faq_set(), {"FAQ.htm": FAQ}, ASKED, is_html=True)


def test_lp_solve_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "\t</TD>",
        "\t\t<p>\n\t\t\t- <b>Can lp_solve handle ratios?</b><br>\n"
        "\t\t\tYes, write the ratio as a linear constraint first.</p>\n\t</TD>",
    )
    nsc.assert_halves_survive_an_added_question(
        ns.lp_solve_faq_set, lambda: (doc / ns.LP_SOLVE_FAQ).write_bytes(more.encode("latin-1"))
    )


def test_lp_solve_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.LP_SOLVE_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.lp_solve_faq_set, "FAQ.htm")
