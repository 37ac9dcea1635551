"""A LangChain Document delivers what its result slot shows: the face chunk and the other
chunks of its passage (issue 33, item 3), not only the face."""

from __future__ import annotations

from pathlib import Path

from langchain_treehop import LangChainEmbedder, TreehopRetriever
from treehop import Treehop

from lc_helpers import WordHashEmbeddings


def test_page_content_is_the_slot_text(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    body = "\n\n".join(f"oauth token scopes refresh paragraph {i}. " * 8 for i in range(8))
    (root / "guide.md").write_text(f"# Guide\n\n## Tokens\n\n{body}")
    with Treehop(
        embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None, chunk_chars=300
    ) as client:
        client.add_resource(root, target_uri="viking://resources/docs")
        docs = TreehopRetriever(client=client, k=1, include_directories=False).invoke(
            "oauth token scopes"
        )
        hit = client.find("oauth token scopes", limit=1, include_directories=False).contexts()[0]
        shown = [c for c in hit.collapsed if c.position is not None]
        assert shown, "the passage's other chunks are shown in the slot"
        assert docs[0].page_content == hit.slot_text
        for c in shown:
            # (without the heading line it leads with: the slot says it once, ingest74)
            assert c.content.split("\n\n", 1)[-1] in docs[0].page_content
