"""A LlamaIndex node delivers what its result slot shows: the face chunk and the other
chunks of its passage (issue 33, item 3), not only the face."""

from __future__ import annotations

from pathlib import Path

from li_helpers import WordHashEmbedding

from llama_index.retrievers.treehop import LlamaIndexEmbedder, TreehopRetriever
from treehop import Treehop


def test_node_text_is_the_slot_text(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    body = "\n\n".join(f"oauth token scopes refresh paragraph {i}. " * 8 for i in range(8))
    (root / "guide.md").write_text(f"# Guide\n\n## Tokens\n\n{body}")
    embedder = LlamaIndexEmbedder(WordHashEmbedding())
    with Treehop(embedder=embedder, tagger=None, chunk_chars=300) as client:
        client.add_resource(root, target_uri="viking://resources/docs")
        nodes = TreehopRetriever(client, similarity_top_k=1).retrieve("oauth token scopes")
        hit = client.find("oauth token scopes", limit=1, include_directories=False).contexts()[0]
        shown = [c for c in hit.collapsed if c.position is not None]
        assert shown, "the passage's other chunks are shown in the slot"
        assert nodes[0].node.get_content() == hit.slot_text
        for c in shown:
            # (without the heading line it leads with: the slot says it once, ingest74)
            assert c.content.split("\n\n", 1)[-1] in nodes[0].node.get_content()
