"""A reST passage's abstract reads past the docinfo field list to the page's own abstract.

usage85: lighttpd's module pages (Debian ``lighttpd-doc``, ``/usr/share/doc/lighttpd/*.txt``)
through ``treehop index``: every page opens with a title, a subtitle, a docinfo field list
(``:Author: Jan Kneschke``, ``:Date: $Date: 2004/11/03 22:26:05 $``, ``:Revision: ...``) and
an ``:abstract:`` field. The first passage's abstract, which ``treehop find``'s table, the
MCP ``find``'s ``abstract`` and the integrations' ``metadata["abstract"]`` show, read
``URL Rewrites › Module: mod_rewrite: :Author: Jan Kneschke :Date: $Date: 2004/11/03
22:26:05 $ :Revision: $Revision: 1.2 $ :abstract:``; it now reads the page's abstract (``url
rewrite``). A passage's abstract is shown, never embedded: a file's (embedded) is unchanged.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.ingest import markup, summaries, writer
from treehop.ingest.summaries import ExtractiveSummarizer, first_sentence

from treehop_test_doubles import BagOfWordsEmbedder

HEAD = (
    "============\nURL Rewrites\n============\n\n"
    "-------------------\nModule: mod_rewrite\n-------------------\n\n"
    ":Author: Jan Kneschke\n:Date: $Date: 2004/11/03 22:26:05 $\n:Revision: $Revision: 1.2 $\n\n"
)
REWRITE = (
    HEAD
    + ":abstract:\n  url rewrite\n\n.. meta::\n  :keywords: lighttpd, rewrite\n\n"
    + ".. contents:: Table of Contents\n\nDescription\n===========\n\n"
    + "internal redirects, url rewrite\n\nOptions\n=======\n\n"
    + "".join(
        f"url.rewrite-{i}\n  rewrites a set of URLs internally in the webserver.\n\n"
        f'  e.g. ::\n\n    url.rewrite-{i} = ( "<regex>" => "<relative-uri>" )\n\n'
        for i in range(60)
    )
)


def test_the_first_passage_of_a_lighttpd_page_is_abstracted_by_its_abstract_field(
    tmp_path: Path,
) -> None:
    (tmp_path / "doc").mkdir()
    (tmp_path / "doc" / "rewrite.txt").write_text(REWRITE, encoding="utf-8")
    with Treehop(None, embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(str(tmp_path / "doc"), target_uri="viking://resources/doc")
        uri = "viking://resources/doc/rewrite.txt"
        node = th.store.get([uri])[0]
        assert node is not None and node.metadata["kind"] == "rst"
        assert node.metadata["chunks"] > 1
        first = th.store.get([f"{uri}#chunk-0"])[0]
        hits = th.find("how do I rewrite URLs internally", limit=5).contexts()
    assert first is not None
    assert first.abstract == "URL Rewrites › Module: mod_rewrite: url rewrite"
    # the passage's text (embedded, BM25-indexed, page_content) was the file's as written;
    # since helper ingest75 it leaves the docinfo out (markup.RST_UNSHOWN_DROPPED)
    assert ":Author: Jan Kneschke" not in first.content
    assert first.embedding_text().startswith("URL Rewrites › Module: mod_rewrite\n\n:abstract:")
    assert hits and not any(":Author:" in m.abstract or "$Date" in m.abstract for m in hits)
    # the file's abstract, embedded: the summariser's, without the docinfo since ingest75
    assert node.abstract == ExtractiveSummarizer().summarize_file("rewrite.txt", REWRITE, "rst")[0]
    assert ":Author:" not in node.abstract


def test_fields_without_an_abstract_give_the_first_paragraph() -> None:
    text = HEAD + ":Version: lighttpd 1.4.12 or higher\n:Packages: lua >= 5.1\n\n"
    text += "mod_magnet is a module to control the request handling in lighty.\n"
    assert first_sentence(text, "rst", as_read=True) == (
        "mod_magnet is a module to control the request handling in lighty."
    )
    # a field with its body indented under it, then prose
    assert first_sentence(":Authors: A\n  B\n\nThe body. More.", "rst", as_read=True) == (
        "The body."
    )
    # an abstract on the marker's line, and one after prose (then it is a field, skipped)
    assert first_sentence(":abstract: url redirection\n\nBody.", "rst", as_read=True) == (
        "url redirection"
    )
    assert first_sentence("Body first.\n\n:abstract: later\n", "rst", as_read=True) == (
        "Body first."
    )


def test_roles_other_kinds_and_embedded_abstracts_are_unchanged() -> None:
    # an interpreted role opens a line of prose: not a field
    role = ":ref:`install` explains the steps. Then more."
    assert first_sentence(role, "rst", as_read=True) == ":ref:install explains the steps."
    # Markdown and plain text have no field lists
    md = ":Author: Jan\n\nBody."
    assert first_sentence(md, "markdown", as_read=True).startswith(":Author: Jan")
    assert first_sentence(md, "text", as_read=True).startswith(":Author: Jan")
    # without as_read (file and directory abstracts: embedded) the fields stayed; since
    # helper ingest75 (markup.RST_UNSHOWN_DROPPED) a file's abstract reads past them too
    assert first_sentence(REWRITE, "rst") == "url rewrite"


_NAME = st.from_regex(r"[A-Za-z][A-Za-z0-9 _-]{0,12}[A-Za-z0-9]", fullmatch=True).filter(
    lambda n: n.strip().lower() != "abstract"
)
_VALUE = st.from_regex(r"[A-Za-z0-9$/.,:<>= -]{0,40}", fullmatch=True)
_SENTENCE = st.from_regex(r"[A-Z][a-z]{1,8}( [a-z]{1,8}){0,8}\.", fullmatch=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_NAME, _VALUE), min_size=1, max_size=6), _SENTENCE, st.booleans())
def test_a_docinfo_field_list_never_reaches_a_passages_abstract(fields, sentence, blank) -> None:
    """Property: a field list before a paragraph leaves the paragraph's first sentence; an
    ``:abstract:`` field among them gives its own text."""
    block = "".join(f":{name}: {value}".rstrip() + "\n" for name, value in fields)
    text = block + ("\n" if blank else "") + "\n" + sentence + " And more text.\n"
    assert first_sentence(text, "rst", as_read=True) == sentence
    with_abstract = block + ":Abstract:\n  " + sentence + "\n\nOther text here.\n"
    assert first_sentence(with_abstract, "rst", as_read=True) == sentence


def test_a_reindex_rewrites_the_abstracts_an_older_reading_gave_without_embedding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index built before this change gets the new passage abstracts at its next
    ``treehop index`` / ``add_resource`` of the folder (``READING_VERSION``), though no file
    changed; nothing is embedded again, since no embedded text changed."""
    doc = tmp_path / "doc"
    doc.mkdir()
    (doc / "rewrite.txt").write_text(REWRITE, encoding="utf-8")
    uri = "viking://resources/doc/rewrite.txt#chunk-0"
    with monkeypatch.context() as m:  # the reading before: field lines read as prose
        m.setattr(summaries, "_RST_FIELD", re.compile("(?!)"), raising=False)
        m.setattr(markup, "RST_UNSHOWN_DROPPED", False)  # and as text (before ingest75)
        m.setattr(writer, "READING_VERSION", writer.READING_VERSION - 1)
        with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
            th.add_resource(str(doc), target_uri="viking://resources/doc")
            old = th.store.get([uri])[0]
    assert old is not None and ":Author: Jan Kneschke" in old.abstract  # the premise
    with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
        again = th.add_resource(str(doc), target_uri="viking://resources/doc")
        new = th.store.get([uri])[0]
    # since ingest75 the re-read also takes the docinfo out of the first passage's text
    # and the file's abstract: those nodes (and the folders above, whose overviews list
    # the file's abstract) are embedded again, the other passages are not
    assert again.read == 1 and again.embedded > 0 and again.unchanged > 0
    assert new is not None and new.abstract == "URL Rewrites › Module: mod_rewrite: url rewrite"
    assert ":Author:" in old.content and ":Author:" not in new.content
