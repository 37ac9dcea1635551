"""The ``falcon-faq`` natural-question set (``bench/natural_sets.py``): Falcon's FAQ
(reStructuredText) read by the rule written for Cython's (``split_cython_faq``, unchanged),
the docs' other pages beside it, and the question-leak check
(``bench/check_question_leaks.py``), on a small inline sdist shaped as PyPI's
``falcon-4.4.0.tar.gz`` ships it (``docs/user/faq.rst``: a target and a "FAQ" title under
``===``, group titles under ``~~~`` over entry titles under ``---`` whose answers start on
the line right after the underline, a stated entry ending with ".", internal targets between
entries, notes, code blocks and auto-numbered ``#.`` lists; beside it the docs' other pages,
one quoting a question and one over the limit, the release notes under ``changes/``, theme
folders, the ``.md`` include stubs, Sphinx extensions and ``conf.py``); the archive put in
the test's cache, so nothing is downloaded; offline, no embedding model, no test reads the
real sdist.

What the set's numbers rest on: the rule chosen for another FAQ carries to this one as it is
(the entry titles ask, the group titles and the one stated entry stay); each answer is
exactly the text under its title, an internal target before the next title dropped; no
question is left in any file; the release notes and everything but the docs' ``.rst`` pages
stay out of the corpus; ids are the questions' slugs, so an entry added keeps the halves; an
answer too short to judge leaves the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns

Q_BATTERIES = "Why doesn't Falcon come with batteries included?"
Q_RAISES = "What happens if my responder raises an error?"
Q_THREADS = "Is Falcon thread-safe?"
Q_CORS = "Why is my request with authorization blocked despite cors_enable?"
Q_SLASH = "Why is my URL with percent-encoded forward slashes (%2F) routed incorrectly?"
Q_DOWNLOAD = "How can I serve a downloadable file with Falcon?"
Q_PYTEST = "How do I test my Falcon app? Can I use pytest?"
Q_STATIC = "Can Falcon serve static files?"
STATED = "I'm setting a cookie, but it isn't being returned in subsequent requests."


def title(text: str, char: str) -> str:
    """A reStructuredText section title underlined with ``char``."""
    return f"{text}\n{char * len(text)}\n"


FAQ = (
    ".. _faq:\n\n"
    + title("FAQ", "=")
    + "\n"
    + title("Design Philosophy", "~")
    + "\n"
    + title(Q_BATTERIES, "-")
    + "Falcon is designed for applications that require a high level of\n"
    "customization or performance tuning.\n\n"
    + title(Q_RAISES, "-")
    + "Falcon assumes that resource responders will do the right thing:\n\n"
    "#. Resource responders set response variables to sane values.\n"
    "#. Your code is well-tested, with high code coverage.\n\n"
    + title(Q_THREADS, "-")
    + "The Falcon framework is, itself, thread-safe.\n\n"
    ".. note::\n    New Request and Response objects are created for each request.\n\n"
    + title("Routing", "~")
    + "\n"
    + title("Why is my request with authorization blocked despite ``cors_enable``?", "-")
    + "The browser sends a preflight request without the header first.\n\n"
    ".. code:: python\n\n    app = falcon.App(cors_enable=True)\n    Not a title\n"
    "    -----------\n\n"
    + title("Why is my URL with percent-encoded forward slashes (``%2F``) routed incorrectly?", "-")
    + "Falcon decodes the path before routing, as the WSGI servers do.\n\n"
    + title("Response Handling", "~")
    + "\n"
    + title(STATED, "-")
    + "By default, Falcon enables the secure cookie attribute over plain HTTP.\n\n"
    ".. _serve-downloadable-as:\n\n"
    + title(Q_DOWNLOAD, "-")
    + "In the ``on_get()`` responder method for the resource, you can tell the\n"
    "user agent to download the file.\n\n"
    + title(Q_STATIC, "-")
    + "Falcon makes it easy to efficiently serve static files with add_static_route.\n\n"
    + title("Misc.", "~")
    + "\n"
    + title(Q_PYTEST, "-")
    + "Falcon's testing framework supports both unittest and pytest.\n"
)
ASKED = [Q_BATTERIES, Q_RAISES, Q_THREADS, Q_CORS, Q_SLASH, Q_DOWNLOAD, Q_STATIC, Q_PYTEST]
ANSWERS = {
    "why-doesn-t-falcon-come-with-batteries-i": (
        "Falcon is designed for applications that require a high level of\n"
        "customization or performance tuning."
    ),
    "what-happens-if-my-responder-raises-an-e": (
        "Falcon assumes that resource responders will do the right thing:\n\n"
        "#. Resource responders set response variables to sane values.\n"
        "#. Your code is well-tested, with high code coverage."
    ),
    "is-falcon-thread-safe": (
        "The Falcon framework is, itself, thread-safe.\n\n"
        ".. note::\n    New Request and Response objects are created for each request."
    ),
    "why-is-my-request-with-authorization-blo": (
        "The browser sends a preflight request without the header first.\n\n"
        ".. code:: python\n\n    app = falcon.App(cors_enable=True)\n    Not a title\n"
        "    -----------"
    ),
    "why-is-my-url-with-percent-encoded-forwa": (
        "Falcon decodes the path before routing, as the WSGI servers do."
    ),
    "how-can-i-serve-a-downloadable-file-with": (
        "In the ``on_get()`` responder method for the resource, you can tell the\n"
        "user agent to download the file."
    ),
    "can-falcon-serve-static-files": (
        "Falcon makes it easy to efficiently serve static files with add_static_route."
    ),
    "how-do-i-test-my-falcon-app-can-i-use-py": (
        "Falcon's testing framework supports both unittest and pytest."
    ),
}


def test_the_cython_rule_reads_falcons_faq() -> None:
    text, qa = ns.split_cython_faq(FAQ)
    # every entry title ending with "?" asks, as a reader types it (inline literals out);
    # its answer starts on the line after the underline and runs to the next title; an
    # auto-numbered "#." list is text, not a heading
    nsc.assert_split_answers(text, qa, ASKED, ANSWERS)
    # the page title, the group titles and the one stated entry (with its text) stay; the
    # targets go, also the one between two entries
    assert text.startswith("# FAQ\n\n## Design Philosophy\n\n")
    for kept in ("## Routing", "## Response Handling", "## Misc."):
        assert kept in text
    assert (
        f"### {STATED}\nBy default, Falcon enables the secure cookie attribute over plain "
        "HTTP.\n\nIn the ``on_get()``"
    ) in text
    assert ".. _" not in text and "~~~" not in text and "===" not in text


# -- the set, built from an sdist shaped like PyPI's falcon-4.4.0.tar.gz ----------------------
# (the checks every sdist set shares run in test_natural_set_sdists.py on SDIST)


def _reads(nset: ns.NaturalSet) -> None:
    # the other pages as markdown, a target gone; a page quoting a question scrubbed, its
    # other text kept
    assert nset.files["index.md"].startswith("# The Falcon Web Framework\n\nFalcon is a")
    tutorial = nset.files["user/tutorial.md"]
    assert tutorial.startswith("# Tutorial (WSGI)\n\nReaders often ask:")
    assert "It is, read on." in tutorial and "## Creating Resources" in tutorial
    # the stated entry is no question: it stays in the FAQ page with its text
    assert f"### {STATED}\nBy default" in nset.files["user/faq.md"]


SDIST = nsc.SdistSet(
    name="falcon-faq",
    build=ns.falcon_faq_set,
    project=ns.FALCON_PROJECT,
    version=ns.FALCON_VERSION,
    doc=ns.FALCON_DOC,
    pages={ns.FALCON_FAQ: FAQ},
    members={
        "docs/index.rst": ".. _index:\n\n"
        + title("The Falcon Web Framework", "=")
        + "\nFalcon is a minimalist ASGI/WSGI framework.\n",
        "docs/user/tutorial.rst": title("Tutorial (WSGI)", "=")
        + f"\nReaders often ask: {Q_DOWNLOAD} It is, read on.\n\n"
        + title("Creating Resources", "-")
        + "\nA resource is a class.\n",
        "docs/api/huge.rst": title("Huge", "=") + "\n" + "Notes. " * 25_000 + "\n",
        "docs/changes/4.4.0.rst": title("Changelog for Falcon 4.4.0", "=") + "\nleftout\n",
        "docs/changes/index.rst": title("Changelogs", "=") + "\nleftout\n",
        "docs/_static/page.rst": "leftout\n",
        "docs/_templates/sidebar-top.html": "<p>leftout</p>\n",
        "docs/community/coc.md": "leftout\n",
        "docs/ext/doorway.py": "leftout = 1\n",
        "docs/conf.py": "leftout = 1\n",
        "CHANGES.rst": "leftout\n",
        "README.rst": "leftout\n",
        "falcon/app.py": "leftout = 1\n",
    },
    sources={k: "user/faq.md" for k in ANSWERS},
    answers=ANSWERS,
    files={"user/faq.md", "index.md", "user/tutorial.md"},
    too_long="api/huge.rst",
    left_out=(),
    note=("PyPI sdist falcon 4.4.0", "changes/ out"),
    asked=ASKED,
    shipped={"faq.txt": ns.rst_plain(FAQ)},
    short=(
        {
            ns.FALCON_FAQ: FAQ.replace(
                "Falcon makes it easy to efficiently serve static files with add_static_route.",
                "Yes, it can.",
            )
        },
        Q_STATIC,
    ),
    added={
        ns.FALCON_FAQ: FAQ.replace(
            title("Routing", "~"),
            title("Does Falcon support WebSocket?", "-")
            + "The async flavor of Falcon supports the ASGI WebSocket protocol.\n\n"
            + title("Routing", "~"),
        )
    },
    refusals=[((ns.FALCON_FAQ,), ns.FALCON_FAQ)],
    reads=_reads,
)
