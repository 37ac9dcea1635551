"""usearch's extension module loaded before onnxruntime's killed the process (SIGSEGV in
onnxruntime's module initialisation, usearch 2.26 / onnxruntime 1.32): a store whose graph
loaded first crashed at the offline embedder's first use. ``_ann._onnxruntime_first`` loads
onnxruntime first. Each case runs in a fresh interpreter: the order of a process's first
imports is the subject, and a crash must fail the test, not end the run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATHS = [str(ROOT / "retrieval"), str(ROOT / "tests")]


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path[:0] = {PATHS!r}\n{code}"],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_store_graph_loaded_before_the_offline_embedder_leaves_both_working(
    tmp_path: Path,
) -> None:
    code = f"""
from pathlib import Path
from treehop import Treehop
from treehop.stores.embedded import EmbeddedStore
from treehop_test_doubles import BagOfWordsEmbedder
idx = Path({str(tmp_path / "idx")!r})
with Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None) as th:
    for i in range(12):
        th.add_resource(f"Alpha text {{i}} here", target_uri=f"viking://resources/a{{i}}.md")
store = EmbeddedStore(idx, ann_min_rows=1)
th = Treehop(store=store, embedder=BagOfWordsEmbedder(), tagger=None)
store.wait_ann()
assert "usearch.compiled" in sys.modules  # (the graph is what loaded first)
hits = th.find("alpha text 3").resources
assert hits, "the graph's find found nothing"
from treehop.embedders import MiniLMEmbedder
vec = MiniLMEmbedder(intra_op_threads=1).embed(["alpha text"])
assert vec.shape == (1, 384)
th.close()
print("ok")
"""
    out = _run(code)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.strip() == "ok"


def test_the_graph_class_loads_onnxruntime_first_and_works_after_it() -> None:
    code = """
import numpy as np
from treehop.stores import _ann
assert "onnxruntime" not in sys.modules and "usearch.compiled" not in sys.modules
index = _ann._index_class()(ndim=8, dtype="i8")
assert "onnxruntime" in sys.modules
rows = (np.arange(80).reshape(10, 8) % 7 * 10).astype(np.int8)
index.add(np.arange(10), rows)
assert int(index.search(rows[3], 1).keys[0]) == 3
import onnxruntime
print("ok")
"""
    out = _run(code)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.strip() == "ok"
