"""The tree in what a user gets: routing vectors at ingest, one slot per passage, explain."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from treehop import RetrievalConfig, Treehop
from treehop.cli._render import tree_effect_lines
from treehop.errors import InvalidQueryError
from treehop.models import FoundBy

R = "viking://resources"


def _docs(tmp: Path) -> Path:
    root = tmp / "docs"
    (root / "auth").mkdir(parents=True)
    (root / "ops").mkdir()
    (root / "auth" / "tokens.md").write_text("oauth tokens expire; refresh tokens rotate")
    (root / "auth" / "sessions.md").write_text("session cookies and oauth login flows")
    (root / "ops" / "deploy.md").write_text("deploy with kubernetes rolling updates")
    long = "\n\n".join(
        f"## Part {i}\n\n" + f"oauth token scopes detail {i}. " * 20 for i in range(4)
    )
    (root / "auth" / "guide.md").write_text("# Guide\n\n" + long)
    return root


@pytest.mark.parametrize("mode", ["centroid", "mixed"])
def test_directory_vectors_represent_their_children(bow, tmp_path: Path, mode: str) -> None:
    with Treehop(embedder=bow, tagger=None, directory_vectors=mode) as th:
        th.add_resource(_docs(tmp_path), target_uri=f"{R}/docs")
        auth = f"{R}/docs/auth"
        kids = th.store.children(auth)
        kv = th.store.get_vectors([k.uri for k in kids])
        centroid = kv.mean(axis=0)
        centroid /= np.linalg.norm(centroid)
        got = th.store.get_vectors([auth])[0]
        node = th.store.get([auth])[0]
        assert node is not None
        summary = np.asarray(bow.embed([node.embedding_text()])[0], np.float32)
        want = centroid if mode == "centroid" else centroid + summary / np.linalg.norm(summary)
        want /= np.linalg.norm(want)
        assert np.allclose(got, want, atol=1e-5)


def test_summary_vectors_stay_the_default(bow, tmp_path: Path) -> None:
    with Treehop(embedder=bow, tagger=None) as th:
        th.add_resource(_docs(tmp_path), target_uri=f"{R}/docs")
        node = th.store.get([f"{R}/docs/auth"])[0]
        assert node is not None
        want = np.asarray(bow.embed([node.embedding_text()])[0], np.float32)
        got = th.store.get_vectors([node.uri])[0]
        assert np.allclose(got, want / np.linalg.norm(want), atol=1e-5)
    with pytest.raises(InvalidQueryError, match="directory_vectors"):
        Treehop(embedder=bow, tagger=None, directory_vectors="average")


def test_chunks_of_one_passage_take_one_slot(bow, tmp_path: Path) -> None:
    """A section cut by size is one passage: its chunks fold into one slot that shows them
    (within document_context_chars; a document's
    different sections take slots of their own: tests/test_result_slots.py)."""
    root = _docs(tmp_path)
    one_section = "\n\n".join(f"oauth token scopes detail {i}. " * 12 for i in range(4))
    (root / "auth" / "guide.md").write_text("# Guide\n\n" + one_section)
    with Treehop(embedder=bow, tagger=None, chunk_chars=300) as th:
        th.add_resource(root, target_uri=f"{R}/docs")
        res = th.find("oauth token scopes", limit=3, include_directories=False)
        docs = [m.parent_uri if m.chunk_index is not None else m.uri for m in res.resources]
        assert len(docs) == len(set(docs)) == 3
        guide = next(m for m in res.resources if m.chunk_index is not None)
        assert guide.collapsed and all(
            c.uri.startswith(f"{R}/docs/auth/guide.md#") for c in guide.collapsed
        )
        assert all(c.score <= guide.score for c in guide.collapsed)
        th.config.collapse_chunks = False
        flat = th.find("oauth token scopes", limit=3, include_directories=False)
        assert all(m.chunk_index is not None for m in flat.resources)


def test_explain_names_hits_found_below_the_global_step(bow, tmp_path: Path) -> None:
    cfg = RetrievalConfig(score_propagation_alpha=0.5, global_search_topk=1)
    with Treehop(embedder=bow, tagger=None, config=cfg, chunk_chars=300) as th:
        th.add_resource(_docs(tmp_path), target_uri=f"{R}/docs")
        # (limit 7: the guide's four sections take four slots of their own)
        res = th.find("oauth tokens", limit=7, include_directories=False, explain=True)
        qr = (res.query_results or [])[0]
        lines = tree_effect_lines(qr, th.aio.display)
        below = [m for m in qr.matched_contexts if m.found_by is not FoundBy.GLOBAL]
        assert below, "a 1-node global step leaves the rest to the descent"
        for m in below:
            assert any(
                th.aio.display(m.uri) in line and "below the global step" in line for line in lines
            )
        blended = [
            m for m in qr.matched_contexts if m.own_score is not None and m.own_score != m.score
        ]
        assert blended and all(
            f"own {m.own_score:.3f} -> {m.score:.3f}" in "\n".join(lines) for m in blended
        )
