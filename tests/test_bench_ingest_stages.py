"""``bench/bench_ingest.py --part nodes --stages``: the per-stage table of the first ingest.

The meter patches the classes whose methods are the stages while one ingest runs: it must
account each stage's time (the sequential stages within the ingest's wall time), count page
faults, and put every method back, whether the ingest returned or raised."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_ingest as bi
from treehop.ingest.tree_builder import TreeBuilder
from treehop.ingest.writer import TreeWriter
from treehop.lexical import LexicalIndex
from treehop.stores.embedded.writes import _Writes

_PATCHED = (
    (TreeWriter, "_plan"),
    (TreeBuilder, "build_tree"),
    (TreeWriter, "apply_tags"),
    (_Writes, "upsert"),  # EmbeddedStore's upsert (its writes mixin)
    (LexicalIndex, "upsert"),
)


def _originals() -> list[object]:
    return [cls.__dict__[name] for cls, name in _PATCHED]


def _args(**kw: object) -> argparse.Namespace:
    base = dict(
        nodes=1500, per_dir=100, changed=5, readds=1, tags="on", hnsw="off", seed=0, stages=True
    )
    base.update(kw)
    return argparse.Namespace(**base)


def test_stage_rows_are_printed_and_the_methods_put_back(
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = _originals()
    bi.part_nodes(_args())
    out = capsys.readouterr().out
    assert _originals() == before
    rows = {}
    for line in out.splitlines():
        for label, *_ in bi._STAGES:
            if line.startswith("      " + label + " "):
                rows[label] = [float(x.rstrip("%")) for x in line[6 + 30 :].split()]
    assert set(rows) == {label for label, *_ in bi._STAGES}
    # every stage ran: the tagger and the store each took time, and the BM25 postings of
    # 1,500 leaves (above the thread's threshold) were written in their own thread
    assert all(r[0] > 0 for r in rows.values())
    ingest_s = float(out.splitlines()[1].split()[2])
    sequential = sum(rows[label][0] for label, *_, own_thread in bi._STAGES if not own_thread)
    assert sequential <= ingest_s * 1.01
    faults = int(out.split("minor page faults in the whole ingest:")[1].split()[0])
    assert faults > 0


def test_without_stages_nothing_is_patched(capsys: pytest.CaptureFixture[str]) -> None:
    seen: list[list[object]] = []
    real = TreeWriter.__dict__["apply_tags"]

    def spy(self: TreeWriter, *a: object, **k: object) -> None:
        seen.append(_originals())
        real(self, *a, **k)

    TreeWriter.apply_tags = spy  # type: ignore[method-assign]
    try:
        bi.part_nodes(_args(nodes=300, stages=False))
    finally:
        TreeWriter.apply_tags = real  # type: ignore[method-assign]
    unpatched = [spy if i == 2 else f for i, f in enumerate(_originals())]
    assert seen and all(x == unpatched for x in seen)  # (the first ingest and the re-add)
    assert "stage" not in capsys.readouterr().out


def test_the_methods_are_put_back_when_the_ingest_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    before = _originals()
    during: list[list[object]] = []

    def broken(self: object, *a: object, **k: object) -> None:
        during.append(_originals())
        raise RuntimeError("ingest failed")

    monkeypatch.setattr(bi.Treehop, "add_resource", broken)
    with pytest.raises(RuntimeError, match="ingest failed"):
        bi.part_nodes(_args(nodes=200))
    assert during and all(a is not b for a, b in zip(during[0], before, strict=True))
    assert _originals() == before


def test_the_rest_counts_the_thread_stage_once(capsys: pytest.CaptureFixture[str]) -> None:
    meter = bi._StageMeter()
    meter.close()
    walls = [1.0, 2.0, 4.0, 3.0, 2.5]  # the BM25 thread's 2.5 s run inside the store write
    for (label, *_), wall in zip(bi._STAGES, walls, strict=True):
        meter.rows[label] = [wall, 0.0, 0.0, 0.0]
    meter.report(12.0, 7)
    rest_line = next(x for x in capsys.readouterr().out.splitlines() if "rest" in x)
    assert float(rest_line.split(")")[1].split()[0]) == pytest.approx(12.0 - 10.0)
