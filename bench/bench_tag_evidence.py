"""Do tag hops matter once tag evidence enters the score? Weight and trigger, chosen on dev.

    TREEHOP_BENCH_CACHE=<cache> python bench/bench_tag_evidence.py \\
        --dataset cranfield,django,pytest,locomo,flask --max-queries 200 --jobs 2

Same five sets (Flask's docs joined after the weight below was chosen on the first four), index,
query vectors, halves and scoring as ``bench_tree.py`` (this script imports its machinery). For
every query of both halves, ``find(limit=10)`` runs with tag hops off and with hops always on at
each ``tag_evidence_weight`` of the grid; the share of the global hits in one first-level
subtree (what the ON_DEMAND trigger reads) is recorded per query.

Groups: each set, its ``/far`` subset (``bench_tree.far_queries``: a relevant unit lies under a
first-level directory whose directory vector ranks below 3rd for the query; built from the
index and the labels only, never from a run), its ``/ordinary`` complement, and
``/far-missed``: the far queries whose hops-off ``find()`` misses a relevant unit in its top 10
(chosen from the hops-off run alone; this is where a hop would have to make up a miss).
"tag-reachable": the share of queries where some relevant leaf carries a rare tag of the
global hits at all (the ceiling of any hop from those hits, whatever its weight).

Choice on the dev halves of all sets jointly (never per set): the weight, and the trigger
threshold tau (hops run when share >= tau; tau 0 = always), maximise the mean dev R@10 gain
over off on the ``/far`` subsets among the (w, tau) whose mean dev loss on the ``/ordinary``
subsets is at most 1 point; if none qualifies, the best mean over all groups. An ON_DEMAND run
at (w, tau) is read off the two runs per query: the hops-on list where share >= tau, else the
hops-off list (when the trigger does not fire, find() is exactly hops off). The test halves
are then reported at the chosen (w, tau), with latency p50 per configuration.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Mapping, Sequence  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_tree as bt  # noqa: E402
import datasets as ds  # noqa: E402
from treehop import RetrievalConfig, Treehop  # noqa: E402
from treehop.stores.base import Scope, ScoredNode  # noqa: E402
from treehop.tag_hops import concentration, effective_root, gather_tag_evidence  # noqa: E402

WEIGHTS = (0.1, 0.2, 0.4, 0.8, 1.6)
TAUS = (0.0, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
FIND = bt.RowSpec("find", "find", "find")


def hit_share(
    ix: bt.Index,
    q: bt.Query,
    vec: Any,
    cfg: RetrievalConfig,
    leaf_tags: Mapping[str, list[str]],
    unit_uris: Mapping[str, list[str]],
) -> tuple[float, bool]:
    """The share of the global step's hits in one first-level subtree (the ON_DEMAND input),
    and whether a tag can reach the answer at all: some relevant leaf carries one of the rare
    hit tags the evidence weighs (the ceiling of any tag hop from these hits)."""
    root = ix.resolve(q.scope)
    store = ix.th.store

    def search(scope: Scope, n: int) -> list[ScoredNode]:
        return store.search(vec, scope, n, query_text=q.text, dense_weight=cfg.dense_weight)

    hits = [
        h for h in search(Scope(subtrees=(root,)), cfg.global_search_topk) if h.node.uri != root
    ]
    share, _ = concentration(hits, [effective_root(store, root)])
    probe = cfg.model_copy(update={"tag_evidence_weight": 1.0})
    ev, _ = gather_tag_evidence(store, hits, [root], Scope(), probe, search, 10)
    rel = [u for unit, g in q.relevant.items() if g > 0 for u in unit_uris.get(unit, [])]
    return share, any(ev.share(leaf_tags.get(u, [])) > 0 for u in rel)


def run_set(name: str, max_queries: int) -> dict[str, Any]:
    """Every query of both halves under every configuration; per-query metrics out."""
    cached = ds.default_embedder()
    bench = bt.load_set(name, cached)
    if bench is None:
        return {"set": name, "skipped": True}
    embedder = bt.MemoEmbedder(cached)
    th = Treehop(None, embedder=embedder, config=RetrievalConfig())
    try:
        bench.ingest(th)
        ix = bt.Index(th, bench)
        dev, test = bt.sampled_halves(bench.queries, max_queries)
        halves = {"dev": dev, "test": test}
        embedder.prepare(
            [q.text for qs in halves.values() for q in qs] + [q.text for q in bench.queries]
        )
        far_all = bt.far_queries(ix, bench.queries, embedder.queries)
        runner = bt.Runner(ix, embedder, None)
        leaf_tags = {n.uri: list(n.tags) for n in th.store.iter_nodes(None) if n.is_leaf}
        unit_uris: dict[str, list[str]] = {}
        for uri, units in zip(ix.leaf_uris, ix.leaf_units, strict=True):
            for u in units:
                unit_uris.setdefault(u, []).append(uri)
        configs: dict[str, dict[str, Any]] = {"off": {"tag_hop_trigger": "off"}}
        for w in WEIGHTS:
            configs[f"w={w}"] = {"tag_hop_trigger": "always", "tag_evidence_weight": w}
        out: dict[str, Any] = {
            "set": name,
            "n_queries": len(bench.queries),
            "n_far": len(far_all),
            "queries": {},
            "latency": {c: [] for c in configs},
        }
        cfg = th.config
        for half, qs in halves.items():
            t0 = time.perf_counter()
            for qi, q in enumerate(qs):
                vec = embedder.queries[q.text]
                share, reach = hit_share(ix, q, vec, cfg, leaf_tags, unit_uris)
                rec: dict[str, Any] = {
                    "half": half,
                    "far": q.qid in far_all,
                    "share": share,
                    "reach": reach,
                }
                keys = list(configs)
                for k in range(len(keys)):  # rotate per query, so drift is shared
                    c = keys[(qi + k) % len(keys)]
                    t1 = time.perf_counter()
                    ranked = runner.call(FIND, configs[c], q, 10)
                    out["latency"][c].append((time.perf_counter() - t1) * 1000)
                    rec[c] = {
                        "r10": bt.recall_at(ranked, q.relevant, 10),
                        "ndcg10": bt.ndcg_at(ranked, q.relevant, 10),
                    }
                out["queries"][q.qid] = rec
            bt._log(
                f"{name}/{half}: {len(qs)} queries x {len(configs)} configs "
                f"in {time.perf_counter() - t0:.0f}s"
            )
        return out
    finally:
        th.close()


def metric(rec: Mapping[str, Any], w: float, tau: float, key: str) -> float:
    """A query's metric under ON_DEMAND at (w, tau): hops-on where the trigger fires."""
    fires = tau <= 0.0 or rec["share"] >= tau
    return float(rec[f"w={w}" if fires else "off"][key])


def groups(data: Sequence[Mapping[str, Any]], half: str) -> dict[str, list[Mapping[str, Any]]]:
    out: dict[str, list[Mapping[str, Any]]] = {}
    for d in data:
        recs = [r for r in d["queries"].values() if r["half"] == half]
        out[d["set"]] = recs
        out[f"{d['set']}/far"] = [r for r in recs if r["far"]]
        out[f"{d['set']}/ordinary"] = [r for r in recs if not r["far"]]
        # Far and missed: the hops-off find() leaves a relevant unit out of its top 10. Chosen
        # from the hops-off run (never a hops-on one): where a hop would have to make up a miss.
        out[f"{d['set']}/far-missed"] = [r for r in recs if r["far"] and r["off"]["r10"] < 1.0]
    return out


def mean_gain(recs: Sequence[Mapping[str, Any]], w: float, tau: float, key: str) -> float:
    if not recs:
        return float("nan")
    return float(np.mean([metric(r, w, tau, key) - float(r["off"][key]) for r in recs]))


def choose(data: Sequence[Mapping[str, Any]]) -> tuple[float, float, list[str]]:
    """(w, tau) on the dev halves of every set jointly (see the module docstring)."""
    g = groups(data, "dev")
    sets = [d["set"] for d in data]
    lines, best, best_any = [], None, None
    for w in WEIGHTS:
        for tau in TAUS:
            far = float(np.nanmean([mean_gain(g[f"{s}/far"], w, tau, "r10") for s in sets]))
            ordi = float(np.nanmean([mean_gain(g[f"{s}/ordinary"], w, tau, "r10") for s in sets]))
            allg = float(np.nanmean([mean_gain(g[s], w, tau, "r10") for s in sets]))
            lines.append(
                f"  w={w:<5} tau={tau:<4} far {far:+.4f} ordinary {ordi:+.4f} all {allg:+.4f}"
            )
            if ordi >= -0.01 and (best is None or far > best[0] + 1e-12):
                best = (far, w, tau)
            if best_any is None or allg > best_any[0] + 1e-12:
                best_any = (allg, w, tau)
    pick = best or best_any
    assert pick is not None
    return pick[1], pick[2], lines


def trigger_table(data: Sequence[Mapping[str, Any]], w: float, half: str) -> None:
    """The ON_DEMAND trigger at weight ``w``, per threshold: how often it fires on far and on
    ordinary queries, and on how many fired queries the tag evidence raised / lowered R@10."""
    recs = [r for d in data for r in d["queries"].values() if r["half"] == half]
    print(f"trigger at w={w} ({half}, all sets): tau | fired far | fired ordinary | R@10 up | down")
    for tau in TAUS:
        fired = [r for r in recs if tau <= 0 or r["share"] >= tau]
        far = [r for r in recs if r["far"]]
        ordi = [r for r in recs if not r["far"]]
        d = [float(r[f"w={w}"]["r10"]) - float(r["off"]["r10"]) for r in fired]
        print(
            f"  {tau:<4} | {sum(r in fired for r in far) / max(len(far), 1):.0%} | "
            f"{sum(r in fired for r in ordi) / max(len(ordi), 1):.0%} | "
            f"{sum(x > 0 for x in d)} | {sum(x < 0 for x in d)}"
        )


def report(data: Sequence[Mapping[str, Any]], w: float, tau: float) -> None:
    print(
        f"| group | half | n | R@10 off | R@10 always w={w} | R@10 on-demand tau={tau} | "
        f"nDCG@10 off | always | on-demand | fired | tag-reachable |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for half in ("test", "dev"):
        for name, recs in groups(data, half).items():
            if not recs:
                continue

            def m(
                tw: float, tt: float, key: str, recs: Sequence[Mapping[str, Any]] = recs
            ) -> float:
                return float(np.mean([metric(r, tw, tt, key) for r in recs]))

            off_r = float(np.mean([r["off"]["r10"] for r in recs]))
            off_n = float(np.mean([r["off"]["ndcg10"] for r in recs]))
            fired = float(np.mean([tau <= 0 or r["share"] >= tau for r in recs]))
            reach = float(np.mean([bool(r.get("reach")) for r in recs]))
            print(
                f"| {name} | {half} | {len(recs)} | {off_r:.3f} | {m(w, 0.0, 'r10'):.3f} | "
                f"{m(w, tau, 'r10'):.3f} | {off_n:.3f} | {m(w, 0.0, 'ndcg10'):.3f} | "
                f"{m(w, tau, 'ndcg10'):.3f} | {fired:.0%} | {reach:.0%} |"
            )


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--dataset", default="cranfield,django,pytest,locomo,flask")
    ap.add_argument("--max-queries", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--json", type=Path, help="write (or, with --child, the one set) here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--load", type=Path, nargs="+", help="report from earlier --json files")
    args = ap.parse_args(argv)
    names = [s.strip() for s in args.dataset.split(",") if s.strip()]
    if args.child:
        assert args.json is not None
        args.json.write_text(json.dumps(run_set(names[0], args.max_queries)))
        return
    if args.load:
        data = [d for f in args.load for d in json.loads(f.read_text())]
    else:
        tmp = Path(tempfile.mkdtemp(prefix="bench_tag_evidence_"))

        def child(name: str) -> dict[str, Any]:
            out = tmp / f"{name}.json"
            cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--dataset", name]
            cmd += ["--max-queries", str(args.max_queries), "--json", str(out)]
            subprocess.run(cmd, check=True)
            return dict(json.loads(out.read_text()))

        with ThreadPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
            data = [d for d in pool.map(child, names) if not d.get("skipped")]
        if args.json:
            args.json.write_text(json.dumps(data))
    for d in data:
        print(f"- {d['set']}: {d['n_queries']} queries, {d['n_far']} in /far (whole set)")
    w, tau, lines = choose(data)
    print("dev, mean over sets of the R@10 gain over hops off:")
    print("\n".join(lines))
    print(f"chosen on dev (all sets jointly): tag_evidence_weight={w}, trigger tau={tau}")
    trigger_table(data, w, "dev")
    trigger_table(data, w, "test")
    report(data, w, tau)
    for d in data:
        lat = ", ".join(f"{c} {np.percentile(v, 50):.1f}" for c, v in d["latency"].items())
        print(f"- {d['set']} find() p50 ms: {lat}")


if __name__ == "__main__":
    main()
