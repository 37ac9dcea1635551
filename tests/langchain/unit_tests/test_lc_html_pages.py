"""LangChain loader output for HTML pages: raw markup (``TextLoader``, ``RecursiveUrlLoader``)
is converted by treehop's HTML handling, and text a loader flattened (``BSHTMLLoader``) loses
its navigation bars, so neither the markup nor ``Prev Up ... Home Next`` reaches the stored
text, the abstracts or the tags."""

from __future__ import annotations

import sys
from pathlib import Path

from bs4 import BeautifulSoup
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document

from langchain_treehop import LangChainEmbedder, TreehopVectorStore, add_documents
from treehop import Treehop
from treehop.integration_kit import page_text

from lc_helpers import WordHashEmbeddings

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "llamaindex"))
from test_li_html_and_progress import PAGE

GLUED = (
    "5.7. Privileges5.7. PrivilegesPrev UpChapter 5. Data DefinitionHome Next\n"
    "When an object is created, it is assigned an owner. The owner is normally the role "
    "that executed the creation statement.\n\n"
    "Prev Up Next5.6. System ColumnsHome 5.8. Row Security Policies"
)
NAV = ("Prev", "Home", "Next", "Chapter 5")


def _no_nav(text: str) -> None:
    for word in NAV:
        assert word not in text, (word, text)


def test_flattened_pages_lose_their_navigation(embeddings: WordHashEmbeddings) -> None:
    flattened = BeautifulSoup(PAGE, "html.parser").get_text()  # what BSHTMLLoader stores
    assert "Prev" in flattened and "Home" in flattened
    docs = [
        Document(page_content=flattened, metadata={"source": "/docs/html/ddl-priv.html"}),
        Document(page_content=GLUED, metadata={"source": "/docs/html/ddl-glued.html"}),
    ]
    with Treehop(None, embedder=LangChainEmbedder(embeddings), tagger="auto") as client:
        uris = add_documents(client, docs)
        for uri in uris:
            text = client.read(uri)
            _no_nav(text)
            assert text.startswith("5.7. Privileges")
            assert "assigned an owner" in text
            node = client.store.get([client.aio.resolve(uri)])[0]
            assert node is not None
            _no_nav(node.abstract)
            assert not [t for t in node.tags if "home" in t or "prev" in t], node.tags


def test_raw_html_in_the_vector_store_is_stored_as_text(embeddings: WordHashEmbeddings) -> None:
    store = TreehopVectorStore(embeddings, tagger=None)
    try:
        ids = store.add_documents(
            [Document(page_content=PAGE, metadata={"source": "https://pg/ddl-priv.html"})]
        )
        doc = store.get_by_ids(ids)[0]
        assert doc.page_content.startswith("## 5.7. Privileges")
        assert "<div" not in doc.page_content and "accesskey" not in doc.page_content
        _no_nav(doc.page_content)
        hit = store.similarity_search("who owns a created object", k=1)[0]
        assert "assigned an owner" in hit.page_content
        # text that is not an HTML page is stored exactly as given
        [plain] = store.add_texts(["Compare a < b with <b>bold</b>."], [{"source": "x.md"}])
        assert store.get_by_ids([plain])[0].page_content == "Compare a < b with <b>bold</b>."
    finally:
        store.close()


_lines = st.lists(
    st.one_of(
        st.sampled_from(["Prev", "Up", "Next", "Home", "Prev Up Next", "Chapter 5. Data", ""]),
        st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=60),
    ),
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(_lines)
def test_page_text_properties(lines: list[str]) -> None:
    text = "\n".join(lines)
    # a document that is not an HTML page is never changed
    assert page_text(text, {"source": "notes.md"}) == text
    assert page_text(text, {}) == text or text.lstrip()[:1] == "<"
    # a flattened HTML page only loses lines (or a glued header) at its ends: every line
    # kept is text of the page, and never more lines than it had
    out = page_text(text, {"source": "page.html"})
    kept = [ln for ln in out.split("\n") if ln.strip()]
    assert all(ln in text for ln in kept)
    assert len(kept) <= len([ln for ln in text.split("\n") if ln.strip()]) + 1


def test_page_text_on_a_large_flattened_page() -> None:
    body = "\n".join(f"Line {i} of a long page, with prose in it." for i in range(50_000))
    big = "5.7. Privileges\nPrev\nUp\nHome\nNext\n" + body + "\nPrev\nUp\nNext\n"
    out = page_text(big, {"source": "big.html"})
    small = page_text(big[: len(big) // 10], {"source": "big.html"})
    assert out.startswith("5.7. Privileges\nLine 0") and out.endswith("prose in it.")
    assert small.startswith("5.7. Privileges\nLine 0")
