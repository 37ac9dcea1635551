"""helper leftovers71c: ``bench_natural.py`` writes no per-kind row for a kind a half lacks.

attacks83: with ``--only-problem-reports`` a half with no problem report of some kind still
got that kind's row, ``n = 0`` and every mean 0.0 (``score``'s empty mean); a pooler that
averages rows rather than weighting by ``n`` would count a row of zeros. The same happened
without the flag whenever a kind's questions all fell in one half. Now a (set, half, kind)
group with no question writes no row; the set's own row per half is kept as before.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_natural as bn
import natural_sets as ns

from treehop_test_doubles import BagOfWordsEmbedder

REPORT = "NFS hangs when the server is unreachable"
FILES = {
    "net/tcp.md": "# tcp\n\nThe TCP window size is printed only with the extended option.\n",
    "fs/nfs.md": "# nfs\n\nAn unreachable NFS server blocks the stat call; the blocking "
    "avoidance option skips kernel calls that could hang on remote mounts.\n",
    "build/cc.md": "# cc\n\nOn AIX the vendor compiler xlc builds cleanly; gcc needs the "
    "header fixes described in the configuration notes.\n",
    "net/dns.md": "# dns\n\nThe resolver retries each name server three times before it "
    "gives up and reports the lookup as failed.\n",
}


def _set(root: Path) -> ns.NaturalSet:
    def q(qid: str, text: str, rel: str, kind: str) -> ns.NaturalQuestion:
        answer = FILES[rel].split("\n\n", 1)[1].strip()
        return ns.NaturalQuestion(qid, text, ((answer, 1.0),), kind=kind, source=rel)

    questions = [
        q("tcp", "Why is the TCP window missing?", "net/tcp.md", "faq"),
        q("cc", "Which compiler builds on AIX?", "build/cc.md", "faq"),
        q("dns", "How often does the resolver retry?", "net/dns.md", "faq"),
        q("nfs", REPORT, "fs/nfs.md", "report"),  # (one question: one half has the kind)
    ]
    assert bn.problem_report_only(REPORT)
    assert not any(bn.problem_report_only(x.text) for x in questions[:3])
    return ns.NaturalSet("kinds", ns.write_tree(FILES, root), questions, "kinds", FILES)


def _rows(nset: ns.NaturalSet, only: bool) -> list[bn.TableRow]:
    rows = bn.parse_rows("flat-bm25,find")
    return bn.evaluate_set(
        nset, rows, ["dev", "test"], BagOfWordsEmbedder(), [], 0, [], only_problem_reports=only
    )


def test_no_row_for_a_kind_a_half_lacks(tmp_path: Path) -> None:
    nset = _set(tmp_path / "kinds")
    table = _rows(nset, only=False)
    assert all(r.scores.n > 0 for r in table), [(r.dataset, r.half, r.key) for r in table]
    report_halves = {r.half for r in table if r.dataset == "kinds/report"}
    assert len(report_halves) == 1  # (the one report question's half, and only it)
    # (the set's own row per half is kept, and the kinds' rows add up to it)
    for half in ("dev", "test"):
        whole = next(r for r in table if (r.dataset, r.half, r.key) == ("kinds", half, "find"))
        parts = [r for r in table if r.half == half and r.key == "find" and "/" in r.dataset]
        assert sum(r.scores.n for r in parts) == whole.scores.n


def test_only_problem_reports_writes_no_empty_kind_row(tmp_path: Path) -> None:
    nset = _set(tmp_path / "kinds")
    table = _rows(nset, only=True)
    assert table and all(r.scores.n > 0 for r in table)
    assert {r.dataset for r in table} == {"kinds", "kinds/report"}
    assert {r.scores.n for r in table} == {1}
    assert len({r.half for r in table}) == 1
