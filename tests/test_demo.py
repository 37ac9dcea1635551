"""The demo shows the tree at work (a descent with rounds, a tag hop) and keeps its index
where it says it does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from treehop import Treehop
from treehop.demo import default_index_path, index_sample_tree, tree_at_work

from treehop_test_doubles import BagOfWordsEmbedder

REPO = Path(__file__).resolve().parents[1]


def test_tree_at_work_descends_and_hops(tmp_path: Path) -> None:
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder()) as client:
        index_sample_tree(client)
        before = client.aio.config
        res, text = tree_at_work(client)
        assert client.aio.config is before  # the demo's settings were for that query only
    qr = (res.query_results or [])[0]
    assert qr.rounds > 0
    assert qr.tag_hops.triggered
    below = [m for m in res.contexts() if m.found_by.value in ("child", "tag_hop")]
    assert below, "no hit came from the descent or a tag hop"
    assert f"rounds ({qr.rounds}):" in text
    assert "from the descent:" in text or "from a tag hop:" in text


def test_default_index_path_is_a_user_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TREEHOP_DEMO_INDEX", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_index_path() == tmp_path / "cache" / "treehop" / "demo-index"
    monkeypatch.setenv("TREEHOP_DEMO_INDEX", str(tmp_path / "here"))
    assert default_index_path() == tmp_path / "here"


def test_the_readme_demo_runs_offline_and_keeps_its_index(tmp_path: Path) -> None:
    """``python -m treehop.demo`` with the real offline embedder, as the README runs it."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "retrieval"), "XDG_CACHE_HOME": str(tmp_path)}
    env.pop("TREEHOP_DEMO_INDEX", None)
    p = subprocess.run(
        [sys.executable, "-m", "treehop.demo"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    where = tmp_path / "treehop" / "demo-index"
    assert f"index: {where} (kept" in p.stdout
    assert (where / "CURRENT").is_file()
    assert "from the descent:" in p.stdout or "from a tag hop:" in p.stdout
    assert "tag hops: triggered" in p.stdout
