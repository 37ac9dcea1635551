"""A file whose first sentence starts with its title keeps that sentence as its abstract.

helper usage86: Flask's Sphinx manual through ``treehop index``: ``deploying/gunicorn.html``
opens ``<h1>Gunicorn</h1><p>Gunicorn is a pure Python WSGI server ...</p>``. The summariser
kept the title alone when the sentence started with it (meant for a sentence that *is* the
title line), so the file's abstract was ``Gunicorn`` (nginx.html ``nginx``, uwsgi.html
``uWSGI``, ...), and ``treehop_read`` / ``ls`` of ``deploying/`` listed ``gunicorn: Gunicorn``
to an agent choosing which page to open. The sentence is now kept whole; a sentence that does
not start with the title keeps ``Title: sentence`` (control), a title-only file its title."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from treehop import Treehop
from treehop.ingest.summaries import ExtractiveSummarizer

from treehop_test_doubles import BagOfWordsEmbedder

PAGE = (
    "<html><body><div class='body'><h1>Gunicorn</h1>"
    "<p><a href='https://gunicorn.org/'>Gunicorn</a> is a pure Python WSGI server with simple "
    "configuration.</p><p>It tends to integrate easily with hosting platforms.</p>"
    "<h2>Installing</h2><p>Create a virtualenv, then install gunicorn.</p></div></body></html>"
)
OTHER = (
    "<html><body><h1>Tell Flask it is Behind a Proxy</h1><p>When using a reverse proxy, the "
    "proxy forwards requests to the local WSGI server.</p><h2>Setup</h2><p>Wrap the app.</p>"
    "</body></html>"
)


def test_a_page_whose_sentence_names_its_title_keeps_the_sentence(tmp_path: Path) -> None:
    site = tmp_path / "deploying"
    site.mkdir()
    (site / "gunicorn.html").write_text(PAGE, encoding="utf-8")
    (site / "proxy_fix.html").write_text(OTHER, encoding="utf-8")
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource(site, target_uri="viking://resources/deploying")
        shown = {e.uri.rsplit("/", 1)[1]: e.abstract for e in th.ls("viking://resources/deploying")}
        overview = th.read("viking://resources/deploying")
    assert shown["gunicorn.html"] == (
        "Gunicorn is a pure Python WSGI server with simple configuration."
    )
    assert "WSGI server" in overview.split("gunicorn")[1].split("\n")[0]
    # control: a sentence that does not start with the title is headed by it
    assert shown["proxy_fix.html"].startswith("Tell Flask it is Behind a Proxy: When using")


def test_control_a_title_only_text_is_its_title() -> None:
    abstract, _ = ExtractiveSummarizer().summarize_file("x.md", "# Gunicorn\n", "markdown")
    assert abstract == "Gunicorn"


_WORD = st.text(alphabet="abcdefghij", min_size=2, max_size=8)


@given(title=st.lists(_WORD, min_size=1, max_size=3), rest=st.lists(_WORD, min_size=2, max_size=8))
def test_a_sentence_starting_with_the_title_is_never_dropped(
    title: list[str], rest: list[str]
) -> None:
    head = " ".join(title).capitalize()
    sentence = f"{head} {' '.join(rest)}."
    text = f"# {head}\n\n{sentence} Then more follows here.\n"
    abstract, overview = ExtractiveSummarizer().summarize_file("p.md", text, "markdown")
    assert abstract == sentence
    assert overview.startswith(sentence)
