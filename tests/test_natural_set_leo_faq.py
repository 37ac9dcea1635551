"""The ``leo-faq`` natural-question set (``bench/natural_sets.py``): Leo's FAQ, read from the
copy Sphinx keeps of its reStructuredText source (``leo/doc/_sources/FAQ.html.txt.txt``) by
the rule written for Cython's (``split_cython_faq``, unchanged), the docs' other pages beside
it, and the question-leak check (``bench/check_question_leaks.py``), on a small inline sdist
(``SDIST``, held to every sdist set's checks in ``test_natural_set_sdists.py``) shaped as
PyPI's ``leo-6.8.10.tar.gz`` ships it (the FAQ: an rst3 comment, a title over- and
underlined with ``#``, link targets, group titles under ``+`` over entry titles under ``*``,
a stated entry, an entry without its "?", an entry with sub-sections under ``^``, a title
with a double space; beside it the docs' other ``_sources`` pages, one quoting a question and
one over the limit, a slide show's page, the ``.leo`` outlines, the ``.md`` notes, the built
HTML's ``conf.py``, a stray ``.rst`` and the package's code); the archive put in the test's
cache, so nothing is downloaded; offline, no embedding model, no test reads the real sdist.

What the set's numbers rest on: the rule chosen for another FAQ carries to this one as it is
(the entry titles that ask are questions, the group titles, the stated entry and the entry
without "?" stay with their text, an entry's own sub-sections stay in its answer); pages
named ``<page>.html.txt.txt`` are read as the other sets read ``<page>.rst`` (the name
without the suffix, then ``.md``); the slide shows and everything that is not such a page
stay out of the corpus; no question is left in any file; ids are the questions' slugs, so an
entry added keeps the halves; an answer too short to judge leaves the set but not the
corpus's scrubbing.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns

Q_RELEASES = "Where can I get official releases of Leo?"
PIP_TITLE = "How to  Pip install from GitHub?"
Q_PIP = "How to Pip install from GitHub?"  # the title's double space read as one
Q_WARS = "How can I eliminate clone wars?"
Q_CROSS = "Why doesn't Leo support cross-outline clones?"
Q_SHEBANG = "How do I make external files start with a shebang line?"
Q_SCREENCAST = "How can I make a screencast?"
Q_CONSOLE = "How can I run Leo from a console window?"
STATED = "Installing Leo with git"
NO_MARK = "How can I use Leo with older C compilers"


def title(text: str, char: str, over: bool = False) -> str:
    """A reStructuredText section title underlined (and, with ``over``, overlined) with
    ``char``."""
    line = char * max(len(text), 4)
    return (f"{line}\n" if over else "") + f"{text}\n{line}\n"


FAQ = (
    ".. rst3: filename: html\\FAQ.html\n\n"
    + title("FAQ", "#", over=True)
    + "\nThis is Leo's Frequently Asked Questions document.\n\n"
    ".. contents:: Contents\n    :depth: 4\n    :local:\n\n"
    ".. _`run Leo in a console`:             running.html#running-leo-from-a-console-window\n\n"
    + title("Getting Leo", "+")
    + "\n"
    + title(Q_RELEASES, "*")
    + "\nSee `Leo's download page <download.html>`_ for the official releases.\n\n"
    + title(STATED, "*")
    + "\nClone the repository with git and run launchLeo.py from it.\n\n"
    + title(PIP_TITLE, "*")
    + "\nRun pip install with the repository's URL and the branch you want.\n\n"
    + title("Clones", "+")
    + "\n"
    + title(Q_WARS, "*")
    + "\nA clone war happens when the same clone appears in several external files.\n\n"
    + title(Q_CROSS, "*")
    + "\nClones across outlines would make every outline depend on the others.\n\n"
    + title("Files", "+")
    + "\n"
    + title(NO_MARK, "*")
    + "\nUse the @first directive to put the old compiler's lines first.\n\n"
    + title(Q_SHEBANG, "*")
    + "\nPut the shebang line in an @first directive at the start of the root node.\n\n"
    + title("Graphics", "+")
    + "\n"
    + title(Q_SCREENCAST, "*")
    + "\nScreencasts are fun to watch and easy to make.\n\n"
    + title("Record your first real take", "^")
    + "\nSpeak slowly and keep each take short.\n\n"
    + title("Trouble shooting", "+")
    + "\n"
    + title(Q_CONSOLE, "*")
    + "\nStart Leo from a terminal with python launchLeo.py to see its messages.\n"
)
ASKED = [Q_RELEASES, Q_PIP, Q_WARS, Q_CROSS, Q_SHEBANG, Q_SCREENCAST, Q_CONSOLE]
ANSWERS = {
    "where-can-i-get-official-releases-of-leo": (
        "See `Leo's download page <download.html>`_ for the official releases."
    ),
    "how-to-pip-install-from-github": (
        "Run pip install with the repository's URL and the branch you want."
    ),
    "how-can-i-eliminate-clone-wars": (
        "A clone war happens when the same clone appears in several external files."
    ),
    "why-doesn-t-leo-support-cross-outline-cl": (
        "Clones across outlines would make every outline depend on the others."
    ),
    "how-do-i-make-external-files-start-with-": (
        "Put the shebang line in an @first directive at the start of the root node."
    ),
    "how-can-i-make-a-screencast": (
        "Screencasts are fun to watch and easy to make.\n\n"
        "#### Record your first real take\n\n"
        "Speak slowly and keep each take short."
    ),
    "how-can-i-run-leo-from-a-console-window": (
        "Start Leo from a terminal with python launchLeo.py to see its messages."
    ),
}


def test_the_cython_rule_reads_leos_faq() -> None:
    text, qa = ns.split_cython_faq(FAQ)
    # every entry title ending with "?" asks, the double space of one read as one; its
    # answer runs to the next entry or group title; an entry's "^" sub-section is its text
    nsc.assert_split_answers(text, qa, ASKED, ANSWERS)
    # the page title, the group titles, the stated entry and the entry without its "?" stay,
    # each with its text; the rst3 comment and the named link target (a URL after its
    # colon) stay as text, as every reStructuredText set keeps them
    assert text.startswith(".. rst3: filename: html\\FAQ.html\n\n# FAQ\n\nThis is Leo's")
    assert ".. _`run Leo in a console`:" in text
    for kept in ("## Getting Leo", "## Clones", "## Files", "## Graphics", "## Trouble shooting"):
        assert kept in text
    assert f"### {STATED}\n\nClone the repository" in text
    assert f"### {NO_MARK}\n\nUse the @first directive" in text
    assert "++++" not in text and "****" not in text and "^^^^" not in text


# -- the set, built from an sdist shaped like PyPI's leo-6.8.10.tar.gz (the checks every sdist
# set is held to: tests/test_natural_set_sdists.py) ----------------------------------------


def _reads(nset: ns.NaturalSet) -> None:
    # the other pages as markdown; a page quoting a question scrubbed, its other text kept
    assert nset.files["glossary.md"].startswith("# Glossary\n\n**Sentinel lines**")
    pim = nset.files["tutorial-pim.md"]
    assert "# Using Leo as a PIM\n\nReaders often ask:" in pim and "Read the FAQ." in pim
    assert "## Clones\n\nA clone is a node" in pim
    # the stated entry and the entry without "?" stay in the FAQ page with their text
    assert f"### {STATED}\n\nClone the repository" in nset.files["FAQ.md"]
    assert f"### {NO_MARK}\n\nUse the @first" in nset.files["FAQ.md"]


SOURCES = "leo/doc/_sources"
FAQ_PAGE = ns.LEO_FAQ  # ("FAQ.html.txt.txt", under ns.LEO_DOC)

SDIST = nsc.SdistSet(
    name="leo-faq",
    build=ns.leo_faq_set,
    project=ns.LEO_PROJECT,
    version=ns.LEO_VERSION,
    doc=ns.LEO_DOC,
    pages={FAQ_PAGE: FAQ},
    members={
        f"{SOURCES}/tutorial-pim.html.txt.txt": ".. rst3: filename: html\\tutorial-pim.html\n\n"
        + title("Using Leo as a PIM", "#", over=True)
        + f"\nReaders often ask: {Q_WARS} Read the FAQ.\n\n"
        + title("Clones", "+")
        + "\nA clone is a node that appears in more than one place.\n",
        f"{SOURCES}/glossary.html.txt.txt": title("Glossary", "#", over=True)
        + "\n**Sentinel lines**: comment lines in external files.\n",
        f"{SOURCES}/huge.html.txt.txt": title("Huge", "#", over=True)
        + "\n"
        + "Notes. " * 25_000
        + "\n",
        f"{SOURCES}/slides/basics/slide-001.html.txt.txt": title("Slide 1", "#", over=True)
        + "\nleftout\n",
        "leo/doc/LeoDocs.leo": "<leo_file>leftout</leo_file>\n",
        "leo/doc/demo.md": "leftout\n",
        "leo/doc/html/conf.py": "leftout = 1\n",
        "leo/doc/notes.rst": title("Notes", "=") + "\nleftout\n",
        "leo/core/leoGlobals.py": "leftout = 1\n",
        "README.md": "leftout\n",
    },
    # every question from the FAQ page, read as FAQ.md
    sources=dict.fromkeys(ANSWERS, "FAQ.md"),
    answers=ANSWERS,
    # the pages named <page>.html.txt.txt, as <page>.md: the FAQ and the other pages but the
    # slide shows' (and not the .leo outlines, the .md notes, conf.py, a stray .rst, code)
    files={"FAQ.md", "tutorial-pim.md", "glossary.md"},
    too_long="huge.html.txt.txt",
    left_out=(),
    note=("PyPI sdist leo 6.8.10", "slides/ out", "7 questions deleted", "(2 files;"),
    asked=ASKED,
    # the FAQ as shipped: the check finds every question there, so it could fail
    shipped={"faq.txt": ns.rst_plain(FAQ)},
    short=(
        {
            FAQ_PAGE: FAQ.replace(
                "Clones across outlines would make every outline depend on the others.",
                "They can't.",
            )
        },
        Q_CROSS,
    ),
    added={
        FAQ_PAGE: FAQ.replace(
            title("Files", "+"),
            title("How can I sync settings across .leo files?", "*")
            + "\nPut the shared settings in myLeoSettings.leo in your home folder.\n\n"
            + title("Files", "+"),
        )
    },
    refusals=[((FAQ_PAGE,), FAQ_PAGE)],
    reads=_reads,
)
