"""The metric code of ``bench/bench_tree.py`` on tiny hand-made data (offline, no MiniLM).

What the benchmark's numbers rest on: a labelled unit counts once, at its first rank, while a
second chunk of it (or a directory) still takes a slot; the held-out split is deterministic
and never moves a query between halves; LoCoMo evidence recall and the mapping of framework
chunks to turns; and the rows run end to end on a real client (with a deterministic embedder).
"""

from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path
from typing import Any

import ir_measures
import pytest
from ir_measures import RR, R, nDCG

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_tree as bt
import datasets as ds
from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder


def fs(*units: str) -> frozenset[str]:
    return frozenset(units)


def test_second_chunk_takes_a_slot_but_is_no_second_hit() -> None:
    rel = {"a": 1.0, "b": 1.0}
    ranked = [fs("a"), fs("a"), fs("b")]
    # a at rank 1, b at rank 3 (rank 2 is a's second chunk): not b at rank 2.
    ideal = 1 / math.log2(2) + 1 / math.log2(3)
    assert bt.ndcg_at(ranked, rel, 10) == pytest.approx(
        (1 / math.log2(2) + 1 / math.log2(4)) / ideal
    )
    assert bt.recall_at(ranked, rel, 2) == 0.5
    assert bt.recall_at(ranked, rel, 3) == 1.0
    # The same unit twice is never worth more than once.
    assert bt.ndcg_at([fs("a"), fs("a")], {"a": 1.0}, 10) == pytest.approx(1.0)
    assert bt.first_ranks(ranked) == {"a": 1, "b": 3}


def test_directory_slot_counts_against_the_list() -> None:
    rel = {"a": 1.0}
    assert bt.reciprocal_rank([fs(), fs("a")], rel, 10) == 0.5
    assert bt.reciprocal_rank([fs(), fs("a")], rel, 1) == 0.0
    assert bt.recall_at([fs()] * 10 + [fs("a")], rel, 10) == 0.0


def test_graded_metrics_match_ir_measures_on_lists_without_duplicates() -> None:
    rng = random.Random(7)
    docs = [f"d{i}" for i in range(30)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    ours: dict[str, list[float]] = {"ndcg": [], "r10": [], "rr": []}
    for q in range(20):
        rel = {d: rng.choice([1, 2, 3, 4]) for d in rng.sample(docs, rng.randint(1, 6))}
        ranking = rng.sample(docs, 15)
        qrels[str(q)] = rel
        run[str(q)] = {d: float(100 - i) for i, d in enumerate(ranking)}
        ranked = [fs(d) for d in ranking]
        gains = {d: float(g) for d, g in rel.items()}
        ours["ndcg"].append(bt.ndcg_at(ranked, gains, 10))
        ours["r10"].append(bt.recall_at(ranked, gains, 10))
        ours["rr"].append(bt.reciprocal_rank(ranked, gains, 10))
    ref = ir_measures.calc_aggregate([nDCG @ 10, R @ 10, RR @ 10], qrels, run)
    assert sum(ours["ndcg"]) / 20 == pytest.approx(ref[nDCG @ 10], abs=1e-9)
    assert sum(ours["r10"]) / 20 == pytest.approx(ref[R @ 10], abs=1e-9)
    assert sum(ours["rr"]) / 20 == pytest.approx(ref[RR @ 10], abs=1e-9)


def test_score_runs_reads_each_metric_from_its_own_limit() -> None:
    rel = {"q": {"a": 1.0, "b": 1.0}}
    runs = {
        5: {"q": [fs("x"), fs("a")]},
        10: {"q": [fs("a"), fs("x")]},
        100: {"q": [fs("a"), fs("b")]},
    }
    s = bt.score_runs(runs, rel, ["q"], with_r5=True)
    assert (s.n, s.r5, s.r10, s.r100, s.mrr10) == (1, 0.5, 0.5, 1.0, 1.0)
    only10 = bt.score_runs({10: runs[10]}, rel, ["q"], with_r5=True)
    assert only10.r100 is None and only10.r5 == 0.5  # R@5 from the limit-10 list's top 5
    assert bt.score_runs(runs, rel, ["q"]).r5 is None


def test_split_halves_is_deterministic_and_stable() -> None:
    ids = [f"q{i}" for i in range(400)]
    dev, test = bt.split_halves(ids)
    assert set(dev) | set(test) == set(ids) and not set(dev) & set(test)
    assert 150 < len(dev) < 250  # about half
    shuffled = ids[:]
    random.Random(3).shuffle(shuffled)
    dev2, _ = bt.split_halves(shuffled)
    assert set(dev2) == set(dev)
    assert dev == [q for q in ids if q in set(dev)]  # input order kept
    # A query's half depends on it alone: a subset keeps every member in its half.
    sub_dev, _ = bt.split_halves([*ids[:50], "new-query"])
    assert set(sub_dev) - {"new-query"} == set(dev) & set(ids[:50])
    assert set(bt.split_halves(ids, seed=1)[0]) != set(dev)
    # --max-queries samples across the file, not its head, and reproducibly.
    head = bt.sample_order(ids)[:50]
    assert head == bt.sample_order(list(reversed(ids)))[:50]
    assert max(int(q[1:]) for q in head) > 200


def test_locomo_evidence_recall_and_chunk_mapping(tmp_path: Path) -> None:
    raw = [
        {
            "sample_id": "conv-x",
            "conversation": {
                "speaker_a": "Ann",
                "speaker_b": "Bo",
                "session_1_date_time": "1 May 2023",
                "session_1": [
                    {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."},
                    {"speaker": "Bo", "dia_id": "D1:2", "text": "What is its  name?"},
                    {"speaker": "Ann", "dia_id": "D1:3", "text": "Miso."},
                ],
            },
            "qa": [
                {"question": "Cat's name?", "evidence": ["D1:1; D1:3"], "category": 1},
                {"question": "Trick", "evidence": ["D1:2"], "category": 5},
                {"question": "Nowhere", "evidence": ["D9:9"], "category": 2},
            ],
        }
    ]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(raw))
    convs, dropped = ds.load_locomo(path)
    assert dropped == {"category5": 1, "unknown_evidence_ids": 1, "no_evidence": 1}
    (q,) = convs[0].questions
    assert q["evidence"] == ["D1:1", "D1:3"]
    assert convs[0].sessions[0].turns[1].line() == "Bo: What is its name?"
    assert ds.dia_id_from_filename(ds.locomo_turn_filename("D12:7")) == "D12:7"

    rel = {"conv-x/D1:1": 1.0, "conv-x/D1:3": 1.0}
    ranked = [
        fs("conv-x/D1:2"),
        fs("conv-x/D1:3"),
        fs("conv-x/D1:3"),
        fs(),
        fs(),
        fs("conv-x/D1:1"),
    ]
    assert bt.recall_at(ranked, rel, 5) == 0.5
    assert bt.recall_at(ranked, rel, 10) == 1.0

    # A 1,000-character chunk holds the turns of which at least half lies inside it.
    spans = [(0, 10, "t1"), (10, 20, "t2"), (20, 30, "t3")]
    assert bt.units_of_chunk(0, 16, spans) == fs("t1", "t2")
    assert bt.units_of_chunk(0, 14, spans) == fs("t1")
    assert bt.units_of_chunk(12, 14, [(0, 100, "long")]) == fs("long")


def test_rows_run_end_to_end_on_a_real_client(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    (root / "animals").mkdir(parents=True)
    (root / "tools").mkdir()
    (root / "animals" / "cats.md").write_text("# Cats\n\nCats purr and chase mice at night.\n")
    (root / "animals" / "dogs.md").write_text("# Dogs\n\nDogs bark and fetch sticks in parks.\n")
    (root / "tools" / "hammer.md").write_text("# Hammer\n\nA hammer drives nails into wood.\n")
    target = "viking://resources/docs"
    queries = [
        bt.Query("1", "purr chase mice", {"animals/cats.md": 1.0}, target),
        bt.Query("2", "drives nails wood", {"tools/hammer.md": 1.0}, target),
    ]
    bench = bt.BenchSet(
        name="tiny",
        family="docs",
        ingest=lambda th: th.add_resource(str(root), target_uri=target),
        unit_of=bt._source_path,
        queries=queries,
        framework_docs=lambda: [],
        note="",
    )
    emb = bt.MemoEmbedder(BagOfWordsEmbedder())
    th = Treehop(None, embedder=emb, tagger=None)
    try:
        bench.ingest(th)
        ix = bt.Index(th, bench)
        emb.prepare([q.text for q in queries])
        runner = bt.Runner(ix, emb, None)
        rows = [
            (r, dict(r.config))
            for r in bt.parse_rows("flat-dense,flat-bm25,flat-hybrid,find,find-leaves,find-dirs")
        ]
        results = bt.run_rows(runner, rows, queries, (10, 100))
        rel = {q.qid: q.relevant for q in queries}
        for res in results:
            scores = bt.score_runs(res.runs, rel, ["1", "2"])
            assert scores.r10 == 1.0, res.row.key
            assert len(res.latency_ms) == 2
        flat = results[0].runs[10]["1"]
        assert flat[0] == fs("animals/cats.md") and len(flat) == 3
        # A directory slot holds no unit but takes its slot (every directory may: find-dirs);
        # by default these folders (overviews generated from their files) take none.
        assert fs() in results[5].runs[10]["1"]
        assert fs() not in results[3].runs[10]["1"]
        assert fs() not in results[4].runs[10]["1"]
    finally:
        th.close()


def test_unknown_rows_are_refused() -> None:
    with pytest.raises(SystemExit):
        bt.parse_rows("flat-dense,nope")
    assert [r.key for r in bt.parse_rows("all")] == [r.key for r in bt.ROWS]


def test_flask_query_file_is_the_derived_set() -> None:
    """The fifth set's checked-in labels: three kinds, unique ids, one judged page each, the
    page paths the converted docs use (``<dir>/<page>.md``), and the method recorded with them;
    a hand edit or a rebuild against another package version shows up here."""
    raw = json.loads(ds.FLASK_QUERIES_FILE.read_text())
    assert "python-flask-doc" in raw["source"]
    assert raw["derived_by"] == "python bench/datasets.py --rebuild-flask-queries"
    qs = ds.load_query_file(ds.FLASK_QUERIES_FILE)
    kinds = {q["kind"] for q in qs}
    assert kinds == {"heading", "first_sentence", "anchor"}
    assert len({q["qid"] for q in qs}) == len(qs)
    assert all(q["query"].strip() and q["relevant"].endswith(".md") for q in qs)
    assert not any(q["relevant"] == "changes.md" for q in qs)  # the changelog is left out
    assert "flask" in bt.SETS


def test_replay_context_equals_tree_scoring_on_a_real_index(tmp_path: Path) -> None:
    """``bench/replay_tree_methods.py`` screens methods on a replay of find()'s tree context;
    its blend must be :func:`treehop.tree_scoring.context_scores` itself (same neighbours in
    the same sibling order, same best sibling, same parent term), or every screened gain is
    measured against the wrong default."""

    import replay_tree_methods as rp
    from treehop.stores.base import Scope
    from treehop.tree_scoring import ContextWeights, context_scores

    root = tmp_path / "docs"
    words = ["cats purr", "dogs bark", "mice squeak", "nails wood", "saw cuts", "glue sticks"]
    for i, w in enumerate(words):
        folder = root / ("animals" if i < 3 else "tools")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"p{i + 1}.md").write_text(f"# Page {i}\n\n{w} and {words[i - 1]} here.\n")
    target = "viking://resources/docs"
    th, emb, ix, t = _replay_tree(root, target)
    try:
        rootu = ix.resolve(target)
        vec = emb.embed_query("cats bark wood")
        hits = th.store.search(
            vec, Scope(subtrees=(rootu,)), 1000, query_text="cats bark wood", dense_weight=0.5
        )
        leaves, dirs, own, par = _replay_scores(t, hits, rootu)
        got = rp.context(t, own, par, 0.35, 0.1, 0.4)
        want = context_scores(leaves, dirs, ContextWeights(0.35, 0.1, 0.4))
        assert len(want) == len(leaves) == 6
        for cs in want:
            assert got[t.leaf_pos[cs.hit.node.uri]] == pytest.approx(cs.final, abs=1e-9)
        # the neighbour term is live here (else the check above would not test it)
        assert any(cs.neighbours != cs.own for cs in want)
    finally:
        th.close()


def test_replay_section_weights_equal_tree_scoring_on_a_real_index(tmp_path: Path) -> None:
    """The replay's neighbour weights between chunks of sectioned pages (same section 1, a
    sibling subsection a share, a neighbour with no heading path 1) must be
    :func:`treehop.tree_scoring.context_scores` with ``sections=True``, the default of
    ``find()``, on real chunks and their real heading paths."""

    import replay_tree_methods as rp
    from treehop.stores.base import Scope
    from treehop.tree_scoring import ContextWeights, context_scores

    root = tmp_path / "docs"
    root.mkdir()
    words = ["cats purr softly", "dogs bark loudly", "mice squeak", "nails wood", "saw cuts"]
    for p in range(2):
        body = f"# Page {p}\n\nIntro about {words[p]}.\n\n"
        for k in range(3):
            body += f"## Part {k}\n\n" + f"{words[(p + k) % 5]} and more text here. " * 60
            body += f"\n\n### Sub {k}\n\n" + f"{words[(p + k + 1) % 5]} again. " * 40 + "\n\n"
        (root / f"p{p}.md").write_text(body)
    target = "viking://resources/docs"
    th, emb, ix, t = _replay_tree(root, target)
    try:
        # the tree has every kind of neighbour pair
        assert {1.0, 0.5} <= set(t.sec_next.tolist()) and min(t.sec_next) < 0.5
        rootu = ix.resolve(target)
        query = "dogs bark mice squeak"
        hits = th.store.search(
            emb.embed_query(query),
            Scope(subtrees=(rootu,)),
            1000,
            query_text=query,
            dense_weight=0.5,
        )
        leaves, dirs, own, par = _replay_scores(t, hits, rootu)
        w = ContextWeights(0.35, 0.1, 0.4)
        for sections in (True, False):
            got = rp.context(t, own, par, 0.35, 0.1, 0.4, sections=sections)
            want = context_scores(leaves, dirs, w, sections=sections)
            assert len(want) == len(leaves) > 10
            for cs in want:
                assert got[t.leaf_pos[cs.hit.node.uri]] == pytest.approx(cs.final, abs=1e-9)
        on = context_scores(leaves, dirs, w, sections=True)
        off = context_scores(leaves, dirs, w)
        assert any(a.final != pytest.approx(b.final) for a, b in zip(on, off, strict=True))
    finally:
        th.close()


def _replay_tree(root: Path, target: str) -> tuple[Any, Any, Any, Any]:
    """A client holding ``root`` ingested at ``target`` the way bench_tree ingests a set, with
    the bench's index and the replay's tree over it (the caller closes the client)."""
    import replay_tree_methods as rp

    bench = bt.BenchSet(
        "tiny",
        "docs",
        lambda th: th.add_resource(str(root), target_uri=target),
        bt._source_path,
        [],
        lambda: [],
        "",
    )
    emb = bt.MemoEmbedder(BagOfWordsEmbedder())
    th = Treehop(None, embedder=emb, tagger=None)
    try:
        bench.ingest(th)
        ix = bt.Index(th, bench)
        return th, emb, ix, rp.Tree(th, ix)
    except BaseException:
        th.close()
        raise


def _replay_scores(
    t: Any, hits: list[Any], rootu: str
) -> tuple[list[Any], dict[str, float], Any, Any]:
    """The leaf hits, the directories' scores, and the replay's own/parent score arrays
    (leaf order of ``t``) from one store search."""
    import numpy as np

    leaves = [h for h in hits if h.node.is_leaf]
    dirs = {h.node.uri: h.score for h in hits if not h.node.is_leaf and h.node.uri != rootu}
    own = np.full(t.L, -np.inf)
    par = np.zeros(t.L)
    for h in leaves:
        own[t.leaf_pos[h.node.uri]] = h.score
        par[t.leaf_pos[h.node.uri]] = dirs.get(h.node.parent_uri or "", 0.0)
    return leaves, dirs, own, par
