"""The ``jupyterhub-faq`` natural-question set (``bench/natural_sets.py``): JupyterHub's FAQ,
three MyST markdown pages, read by the rule written for Cython's reStructuredText FAQ
(``split_cython_faq``'s loop, shared as ``_split_asking_headings``) through
``split_markdown_faq``, the docs' other pages beside them, and the question-leak check
(``bench/check_question_leaks.py``), on a small inline sdist shaped as PyPI's
``jupyterhub-6.1.1.tar.gz`` ships it (``docs/source/faq/``: ``faq.md`` with one question and
its sub-sections, ``institutional-faq.md`` with audience groups over questions,
``troubleshooting.md`` with problem reports and a "How do I...?" group over bare titles;
``(label)=`` targets, fenced code holding ``#`` lines, ```` ```{note} ```` directives, MyST
roles and inline code in titles; beside them a page with YAML front matter, one quoting a
question, one over the limit, the changelog, theme folders, ``conf.py`` and word lists); the
archive put in the test's cache, so nothing is downloaded; offline, no embedding model, no
test reads the real sdist.

What the set's numbers rest on: the rule carries to markdown unchanged (the titles ending
with "?" that have their own text ask; page titles, group titles, problem reports and the
"How do I...?" group's bare titles stay); a ``#`` line inside fenced code is never a heading;
each answer is exactly the text under its title, its deeper sub-sections included, targets
dropped; no question is left in any file; the ids are the questions' slugs counted across the
three pages (a repeat ``-2``); the changelog and everything but the docs' ``.md`` pages stay
out; an answer too short to judge leaves the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns

Q_SHARE = "How do I share links to notebooks?"
Q_SECURE = "Is JupyterHub secure?"
Q_USERS = "How do I manage users?"
Q_DIFF = (
    "I keep hearing about Jupyter Notebook, JupyterLab, and now JupyterHub. What’s the difference?"
)
Q_SPAWN = "Why am I getting a Spawn failed error message?"
Q_SUDO = "How can I run JupyterHub with sudo but use my current environment variables?"
Q_LAB = "How do I use JupyterLab's pre-release version with JupyterHub?"
Q_TOKEN = "Why does jupyterhub-singleuser need JUPYTERHUB_API_TOKEN?"
Q_SCALE = "How well does JupyterHub scale? What are JupyterHub's limitations?"
STATED = "JupyterHub proxy fails to start"
BARE = "Use a chained SSL certificate"

FAQ_PAGE = (
    "(faq)=\n\n"
    "# Frequently asked questions\n\n"
    f"## {Q_SHARE}\n\n"
    "In short, where you see `/user/name/notebooks/foo.ipynb` use `/hub/user-redirect/`.\n\n"
    "### link to the same file on the visitor's server\n\n"
    "You may want to share a link to a notebook.\n\n"
    "```python\n# not a heading: a comment in code\nc.Spawner.default_url = '/lab'\n```\n"
)
INSTITUTIONAL = (
    "(faq:institutional)=\n\n"
    "# Institutional FAQ\n\n"
    "This page contains common questions from users of JupyterHub.\n\n"
    "## For all\n\n"
    f"### {Q_DIFF}\n\n"
    "Here is a quick breakdown of these three tools.\n\n"
    "## For IT\n\n"
    f"### {Q_SECURE}\n\n"
    "The short answer: yes. JupyterHub is a tool for running code.\n\n"
    "````{note}\nA nested fence:\n```\n## Not a title either\n```\n````\n\n"
    "(faq:users)=\n\n"
    "### How do I manage **users**?\n\n"
    "JupyterHub offers a few options for managing your users.\n\n"
    "## For Technical Leads\n\n"
    f"### {Q_SCALE}\n\n"
    "JupyterHub works well at both a small scale and a large scale.\n"
)
TROUBLESHOOTING = (
    "(troubleshooting)=\n\n"
    "# Troubleshooting\n\n"
    "When troubleshooting, you may see unexpected behaviors.\n\n"
    "## Behavior\n\n"
    f"### {STATED}\n\n"
    "If you have tried to start the JupyterHub proxy and it fails to start, check the port.\n\n"
    f"### {Q_SPAWN}\n\n"
    "The spawn failed error message can occur for multiple reasons.\n\n"
    f"### {Q_SUDO}\n\n"
    "Use `sudo -E jupyterhub` to keep the environment.\n\n"
    "## Errors\n\n"
    "### Why does `jupyterhub-singleuser` need {envvar}`JUPYTERHUB_API_TOKEN`?\n\n"
    "The single-user server talks to the Hub's API with it.\n\n"
    "#### Symptoms\n\n"
    "The server stops at start with an error.\n\n"
    "## How do I...?\n\n"
    f"### {BARE}\n\n"
    "Your certificate may be issued by an intermediate authority.\n\n"
    f"### {Q_LAB}\n\n"
    "A pre-release version of JupyterLab can be installed with pip.\n\n"
    f"### {Q_SHARE}\n\n"
    "See the other FAQ page for the long answer to this one.\n"
)
FAQS = {
    "faq/faq.md": FAQ_PAGE,
    "faq/institutional-faq.md": INSTITUTIONAL,
    "faq/troubleshooting.md": TROUBLESHOOTING,
}
ASKED = {
    "faq/faq.md": [Q_SHARE],
    "faq/institutional-faq.md": [Q_DIFF, Q_SECURE, Q_USERS, Q_SCALE],
    "faq/troubleshooting.md": [Q_SPAWN, Q_SUDO, Q_TOKEN, Q_LAB, Q_SHARE],
}
ANSWERS = {
    "how-do-i-share-links-to-notebooks": (
        "In short, where you see `/user/name/notebooks/foo.ipynb` use `/hub/user-redirect/`.\n\n"
        "### link to the same file on the visitor's server\n\n"
        "You may want to share a link to a notebook.\n\n"
        "```python\n# not a heading: a comment in code\nc.Spawner.default_url = '/lab'\n```"
    ),
    "i-keep-hearing-about-jupyter-notebook-ju": ("Here is a quick breakdown of these three tools."),
    "is-jupyterhub-secure": (
        "The short answer: yes. JupyterHub is a tool for running code.\n\n"
        "````{note}\nA nested fence:\n```\n## Not a title either\n```\n````"
    ),
    "how-do-i-manage-users": "JupyterHub offers a few options for managing your users.",
    "how-well-does-jupyterhub-scale-what-are-": (
        "JupyterHub works well at both a small scale and a large scale."
    ),
    "why-am-i-getting-a-spawn-failed-error-me": (
        "The spawn failed error message can occur for multiple reasons."
    ),
    "how-can-i-run-jupyterhub-with-sudo-but-u": "Use `sudo -E jupyterhub` to keep the environment.",
    "why-does-jupyterhub-singleuser-need-jupy": (
        "The single-user server talks to the Hub's API with it.\n\n"
        "#### Symptoms\n\n"
        "The server stops at start with an error."
    ),
    "how-do-i-use-jupyterlab-s-pre-release-ve": (
        "A pre-release version of JupyterLab can be installed with pip."
    ),
    "how-do-i-share-links-to-notebooks-2": (
        "See the other FAQ page for the long answer to this one."
    ),
}


Split = tuple[str, list[tuple[str, str, str]]]


def _split_all() -> dict[str, Split]:
    """The three pages through :func:`split_markdown_faq` with one id counter, as the set
    reads them: {page: (the page without its questions, its (id, question, answer))}."""
    seen: dict[str, int] = {}
    return {rel: ns.split_markdown_faq(page, seen) for rel, page in FAQS.items()}


def test_the_cython_rule_reads_jupyterhubs_markdown_faq() -> None:
    split = _split_all()
    texts = {rel: text for rel, (text, _) in split.items()}
    qa = [t for _, page_qa in split.values() for t in page_qa]
    per_page = {rel: [q for _, q, _ in page_qa] for rel, (_, page_qa) in split.items()}
    # every title ending with "?" with text of its own asks, as a reader types it (inline
    # code, emphasis and MyST roles out); the answers run to the next title of their level
    # or higher, deeper sub-sections ("### link to ...", "#### Symptoms") included; ids
    # counted across the pages (the second "How do I share ...?" is -2)
    assert per_page == ASKED
    assert {k: a for k, _, a in qa} == ANSWERS
    assert [k for k, _, _ in qa] == list(ANSWERS)
    for text, page_qa in split.values():
        nsc.assert_page_keeps_answers(page_qa, text)
    # page titles, group titles, the problem report (with its text) and the "How do I...?"
    # group's bare title (with its text) stay; the targets go
    inst, trouble = texts["faq/institutional-faq.md"], texts["faq/troubleshooting.md"]
    assert inst.startswith("# Institutional FAQ\n\nThis page contains common questions")
    for kept in ("## For all", "## For IT", "## For Technical Leads"):
        assert kept in inst
    assert f"### {STATED}\n\nIf you have tried" in trouble
    assert f"## How do I...?\n\n### {BARE}\n\nYour certificate" in trouble
    assert texts["faq/faq.md"].startswith("# Frequently asked questions\n\nIn short,")
    assert all("(faq" not in t and "(troubleshooting)=" not in t for t in texts.values())
    # no asked title is left as a heading
    for text in texts.values():
        for _, q, _ in qa:
            assert f" {q}\n" not in text


def test_myst_to_markdown_drops_front_matter_and_targets_only() -> None:
    page = (
        "---\npage_template: redoc.html\n# see: the options\nredoc_options:\n  x: true\n---\n\n"
        "(rest-api)=\n\n# JupyterHub REST API\n\nText.\n\n"
        "```\n(kept-in-code)=\n```\n\n---\n\n## After a rule\n"
    )
    assert ns.myst_to_markdown(page) == (
        "# JupyterHub REST API\n\nText.\n\n```\n(kept-in-code)=\n```\n\n---\n\n## After a rule\n"
    )
    # the front matter's "# see:" comment would otherwise be read as a heading
    _, qa = ns.split_markdown_faq(page.replace("## After a rule", "## Does it ask?\n\nYes."))
    assert [q for _, q, _ in qa] == ["Does it ask?"]


def test_markdown_plain() -> None:
    assert ns.markdown_plain("How do I use {ref}`the proxy <proxy-label>`?") == (
        "How do I use the proxy?"
    )
    assert ns.markdown_plain("Is [**Docker**](https://docker.com) `required`?") == (
        "Is Docker required?"
    )
    assert ns.markdown_plain("What is  `c.Spawner.cmd`\\?") == "What is c.Spawner.cmd?"


_WORD = st.sampled_from(["hub", "proxy", "spawner", "token", "oauth", "user", "server"])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(2, 5),  # the heading's level (# x level)
            st.booleans(),  # ends with "?"
            st.lists(_WORD, min_size=0, max_size=4),  # its own text (empty: none)
            st.booleans(),  # the text followed by a fenced block holding a "#" line
        ),
        min_size=1,
        max_size=9,
    )
)
def test_split_markdown_faq_property(entries: list[tuple[int, bool, list[str], bool]]) -> None:
    """Random runs of markdown headings under a page title, each a question ("...?") or a
    topic, with or without text of its own, some texts followed by fenced code whose lines
    look like headings: a heading inside an open question (deeper than it) is part of its
    answer; any other asks when it ends with "?" and has text of its own (a fence counts as
    text), and its answer is all the text, fences and deeper headings up to the next heading
    of its level or higher. Exactly those, in order, with slug ids; every answer in the page;
    no asked title left in it; every title that does not ask kept; a fenced "#" line never
    read as a heading."""
    md = ["# FAQ\n"]
    titles: list[str] = []
    bodies: list[str] = []
    for n, (level, asks, words, fenced) in enumerate(entries):
        titles.append(f"entry{n}x ask this?" if asks else f"entry{n}x topic")
        md.append(f"\n{'#' * level} {titles[-1]}\n")
        blocks = [f"Text{n} {' '.join(words)}."] if words else []
        if fenced:
            blocks.append(f"```\n## code{n}x?\nmore\n```")
        bodies.append("\n\n".join(blocks))
        if blocks:
            md.append("\n" + bodies[-1] + "\n")
    text, qa = ns.split_markdown_faq("".join(md))
    nsc.assert_heading_rule_split(
        [e[0] for e in entries],
        titles,
        bodies,
        lambda k: entries[k][1] and bool(bodies[k]),
        text,
        qa,
    )
    for n in range(len(titles)):
        if entries[n][3]:
            assert f"## code{n}x?\n" in text  # fenced: kept as code, never asked


# -- the set, built from an sdist shaped like PyPI's jupyterhub-6.1.1.tar.gz -----------------
# (the checks every sdist set shares run in test_natural_set_sdists.py on SDIST)


def _reads(nset: ns.NaturalSet) -> None:
    # front matter and targets gone; a page quoting a question scrubbed, its other text kept
    assert nset.files["reference/rest-api.md"] == (
        "# JupyterHub REST API\n\nThe Hub's API is documented here.\n"
    )
    proxy = nset.files["howto/proxy.md"]
    assert proxy.startswith("# Proxy\n\nUsers ask:") and "Read on." in proxy
    assert "## Ports" in proxy and "(howto:proxy)=" not in proxy
    # the problem report and the bare title stay in their page with their text
    trouble = nset.files["faq/troubleshooting.md"]
    assert f"### {STATED}\n\nIf you have tried" in trouble and f"### {BARE}\n\n" in trouble


SDIST = nsc.SdistSet(
    name="jupyterhub-faq",
    build=ns.jupyterhub_faq_set,
    project=ns.JUPYTERHUB_PROJECT,
    version=ns.JUPYTERHUB_VERSION,
    doc=ns.JUPYTERHUB_DOC,
    pages=FAQS,
    members={
        "docs/source/faq/index.md": "# FAQs\n\n```{toctree}\nfaq\ninstitutional-faq\n```\n",
        "docs/source/index.md": "# JupyterHub\n\nJupyterHub is the best way to serve notebooks.\n",
        "docs/source/reference/rest-api.md": (
            "---\npage_template: redoc.html\n# see: options\n---\n\n"
            "# JupyterHub REST API\n\nThe Hub's API is documented here.\n"
        ),
        "docs/source/howto/proxy.md": (
            f"(howto:proxy)=\n\n# Proxy\n\nUsers ask: {Q_SPAWN} Read on.\n\n"
            "## Ports\n\nThe proxy listens on 8000.\n"
        ),
        "docs/source/reference/huge.md": "# Huge\n\n" + "Notes. " * 25_000 + "\n",
        "docs/source/reference/changelog.md": "# Changelog\n\nleftout\n",
        "docs/source/_static/custom.md": "leftout\n",
        "docs/source/_templates/page.html": "<p>leftout</p>\n",
        "docs/source/spelling_wordlist.txt": "leftout\n",
        "docs/source/redirects.txt": "leftout\n",
        "docs/source/conf.py": "leftout = 1\n",
        "docs/Makefile": "leftout:\n",
        "README.md": "leftout\n",
        "jupyterhub/app.py": "leftout = 1\n",
    },
    # each question's answer from its own page, all three pages in the corpus
    sources=dict(zip(ANSWERS, [rel for rel, asked in ASKED.items() for _ in asked], strict=True)),
    answers=ANSWERS,
    files={*FAQS, "faq/index.md", "index.md", "reference/rest-api.md", "howto/proxy.md"},
    too_long="reference/huge.md",
    left_out=(),
    note=("PyPI sdist jupyterhub 6.1.1", "reference/changelog.md out"),
    asked=[q for page in ASKED.values() for q in page],  # the repeated question twice
    shipped={rel: ns.markdown_plain(page) for rel, page in FAQS.items()},
    short=(
        {
            **FAQS,
            "faq/troubleshooting.md": TROUBLESHOOTING.replace(
                "A pre-release version of JupyterLab can be installed with pip.", "Use pip."
            ),
        },
        Q_LAB,
    ),
    added={
        "faq/institutional-faq.md": INSTITUTIONAL.replace(
            "## For Technical Leads",
            "### Can JupyterHub run on Windows?\n\nNot as a supported platform.\n\n"
            "## For Technical Leads",
        )
    },
    refusals=[((page,), page) for page in ns.JUPYTERHUB_FAQS],
    reads=_reads,
)
