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

import io
import sys
import tarfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import datasets as ds
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

TOP = f"falcon-{ns.FALCON_VERSION}"


def _sdist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    """The sdist archive in a benchmark cache at ``tmp_path`` (``pypi/downloads/``), as
    ``pip download`` leaves it; returns the archive's path."""
    monkeypatch.setattr(ds, "CACHE_DIR", tmp_path)
    docs = {
        "docs/user/faq.rst": faq,
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
    }
    work = tmp_path / "pypi" / "downloads"
    work.mkdir(parents=True)
    archive = work / f"{ns.FALCON_PROJECT}-{ns.FALCON_VERSION}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for rel, body in docs.items():
            data = body.encode("utf-8")
            info = tarfile.TarInfo(f"{TOP}/{rel}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return archive


@pytest.fixture
def archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sdist as shipped (:data:`FAQ`), not yet unpacked."""
    return _sdist(tmp_path, monkeypatch)


def _faq_path() -> Path:
    root: Path = ns.fetch_pypi_sdist(ns.FALCON_PROJECT, ns.FALCON_VERSION)
    faq: Path = root / ns.FALCON_DOC / ns.FALCON_FAQ
    return faq


def test_falcon_faq_set_from_an_sdist(archive: Path) -> None:
    nset = ns.falcon_faq_set()
    nsc.assert_package_set(
        nset,
        "falcon-faq",
        ids=list(ANSWERS),
        files={"user/faq.md", "index.md", "user/tutorial.md"},
        source="user/faq.md",
        version=ns.FALCON_VERSION,
        too_long="api/huge.rst",
        answers=ANSWERS,
    )
    assert nset.left_out == ()
    # the release notes, theme folders, .md stubs, extensions, conf.py and the package's
    # own files stay out
    assert "leftout" not in " ".join(nset.files.values())
    # the other pages as markdown, a target gone; a page quoting a question scrubbed, its
    # other text kept
    assert nset.files["index.md"].startswith("# The Falcon Web Framework\n\nFalcon is a")
    tutorial = nset.files["user/tutorial.md"]
    assert tutorial.startswith("# Tutorial (WSGI)\n\nReaders often ask:")
    assert "It is, read on." in tutorial and "## Creating Resources" in tutorial
    # the stated entry is no question: it stays in the FAQ page with its text
    assert f"### {STATED}\nBy default" in nset.files["user/faq.md"]
    assert "PyPI sdist falcon 4.4.0" in nset.note and "changes/ out" in nset.note


def test_falcon_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "Falcon makes it easy to efficiently serve static files with add_static_route.",
        "Yes, it can.",
    )
    assert short != FAQ
    _sdist(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.falcon_faq_set(), Q_STATIC, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(archive: Path) -> None:
    # the FAQ as shipped: the check finds every question there, so it could fail
    nset = ns.falcon_faq_set()
    shipped = {"faq.txt": ns.rst_plain(FAQ)}
    nsc.assert_leak_checked(nset, shipped, ASKED)


def test_falcon_faq_set_halves_are_fixed_and_disjoint(archive: Path) -> None:
    added = (
        title("Does Falcon support WebSocket?", "-")
        + "The async flavor of Falcon supports the ASGI WebSocket protocol.\n\n"
    )
    more = FAQ.replace(title("Routing", "~"), added + title("Routing", "~"))
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.falcon_faq_set, lambda: _faq_path().write_text(more, encoding="utf-8")
    )


def test_falcon_faq_set_refuses_an_sdist_without_the_faq(archive: Path) -> None:
    _faq_path().unlink()
    nsc.assert_refuses_without_faq(ns.falcon_faq_set, ns.FALCON_FAQ)
