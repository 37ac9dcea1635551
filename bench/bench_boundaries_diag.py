"""How often find()'s slot that holds part of an answer delivers less than half of it
(issue 33 item 6, helper boundaries, stop 54); a diagnosis, nothing changes a default.

Per question of the given sets' half: the first of find()'s 100 slots above the first judged
one whose delivered text holds at least 10 % of an answer's word 5-grams; its cause, read on
the chunks of that slot's document (the share of the answer's 5-grams each holds):

* ``answer in one chunk the slot lacks``: one chunk holds half the answer, the slot holds a
  neighbour with a piece of it (the chunker's size cut split the answer);
* ``answer over chunks, longer than slot``: no chunk holds half; the slot's chunks and the
  answer's together exceed 3,000 characters (the slot grew away from the answer);
* ``answer over chunks, slot could hold them``: the same, within 3,000 characters;
* ``answer not in chunk text``: the chunks together hold under half (a whole-file node, or
  the answer's 5-grams spread thin).

    python bench/bench_boundaries_diag.py SETS HALF [CONFIG_JSON] [OUT_JSON]
"""

import json
import os
import sys
from collections import Counter

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_natural as bn
import bench_tree as bt
import natural_sets as ns

sets = sys.argv[1].split(",")
half = sys.argv[2] if len(sys.argv) > 2 else "dev"
cfg = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
out_path = sys.argv[4] if len(sys.argv) > 4 else f"/tmp/boundaries_diag_{half}.json"
cached = bn.bench_embedder("")
judge = bn.Judge()
row = bn.Row("find", "find", "find", config=cfg)
tot = Counter()
recs = []


def cov(ak, text):
    g = judge.key(text).grams
    return len(ak.grams & g) / max(1, len(ak.grams))


for name in sets:
    nset = ns.load_natural_set(name, cached)
    dev, test = bt.sampled_halves(nset.questions, None)
    qs = dev if half == "dev" else test
    with bn.indexed_set(nset, cached) as ix:
        runner = bn.Runner(ix.th, ix.embedder, ix.flat, ix.scope)
        ix.embedder.prepare([q.text for q in qs])
        text_of = ix.flat.text_of
        for q in qs:
            answers = [a for a, _ in q.answers]
            aks = [judge.key(a) for a in answers if judge.key(a).n_words >= 5]
            texts, res = runner.results(row, q, 100)
            slots = res.contexts()
            r = next((i + 1 for i, t in enumerate(texts) if judge.units(t, answers)), None)
            tot["q"] += 1
            if not aks:
                continue
            lim = (r or 101) - 1
            # first slot above the judged one holding part (>=10%) of an answer
            part = None
            for k, (m, t) in enumerate(zip(slots[:lim], texts[:lim], strict=True)):
                c = max(cov(ak, t) for ak in aks)
                if c >= 0.1:
                    part = (k + 1, c, m)
                    break
            if part is None:
                continue
            k, c, m = part
            ak = max(aks, key=lambda a: cov(a, texts[k - 1]))
            members = [m.uri] + [x.uri for x in m.collapsed if x.position is not None]
            doc = m.uri.split("#")[0]
            chunks = sorted(
                (u for u in text_of if u.startswith(doc + "#")),
                key=lambda u: int(u.rsplit("-", 1)[1]),
            )
            hits = {u: cov(ak, text_of[u]) for u in chunks}
            ans_chunks = [u for u in chunks if hits[u] > 0.02]
            best_chunk = max(hits.values()) if hits else 0
            missing = [u for u in ans_chunks if u not in members]
            union = sum(hits[u] for u in ans_chunks)
            if best_chunk >= 0.5:
                cause = (
                    "answer in one chunk the slot lacks"
                    if max((hits[u] for u in members if u in hits), default=0) < 0.5
                    else "?"
                )
            elif union < 0.5:
                cause = "answer not in chunk text"
            else:
                need = sum(len(text_of[u]) + 2 for u in set(members) | set(ans_chunks))
                cause = (
                    "answer over chunks, slot could hold them"
                    if need <= 3002
                    else "answer over chunks, longer than slot"
                )
            # is the slot face an answer chunk? does the slot mix another answer?
            tot["partial"] += 1
            tot[cause] += 1
            if r is None or r > 10:
                tot["partial_and_r>10"] += 1
            recs.append(
                dict(
                    set=name,
                    qid=q.qid,
                    rank=r,
                    part_at=k,
                    cov=round(c, 2),
                    cause=cause,
                    slot_chars=len(texts[k - 1]),
                    answer_chars=len(answers[0]),
                    members=[u.rsplit("#", 1)[-1] for u in members],
                    ans_chunks={u.rsplit("#", 1)[-1]: round(hits[u], 2) for u in ans_chunks},
                    mdoc=doc.rsplit("/", 1)[-1],
                )
            )
    print(name, dict(tot), flush=True)
print(json.dumps(dict(tot)))
with open(out_path, "w") as f:
    json.dump({"counts": dict(tot), "records": recs}, f, indent=1)
