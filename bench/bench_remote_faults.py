"""How long a faulty remote service can hold a call, and whether a key ever leaks.

Every remote dependency (embedder, ``/rerank`` reranker, VikingDB reranker, chat model as
planner, VikingDB knowledge source) is pointed at a loopback server that misbehaves in one
way (see ``tests/fake_servers/fault_server.py``), with ``deadline_s`` set and, side by side,
without it (the behaviour before total deadlines existed: per-read timeouts only). Printed per
dependency and fault: seconds until the caller got its answer (a typed error or the documented
fallback), the outcome, and whether the API key appeared in any output (exception text with
traceback, result JSON, log records).

    python bench/bench_remote_faults.py [--deadline 1.0] [--cap 15]

The no-deadline column is cut at ``--cap`` seconds (shown as ``>cap``): a byte-trickling
server would otherwise hold it for minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import logging
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "retrieval"), str(ROOT / "tests")]

from treehop import AsyncTreehop, Treehop  # noqa: E402
from treehop._http import RetryPolicy  # noqa: E402
from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder  # noqa: E402
from treehop.llm.openai_compatible import OpenAICompatibleLLM  # noqa: E402
from treehop.rerankers.http_rerank import HTTPReranker  # noqa: E402
from treehop.rerankers.vikingdb_rerank import VikingDBReranker  # noqa: E402
from treehop.vikingdb_knowledge import VikingDBKnowledgeSource  # noqa: E402

from fake_servers.fault_server import MODES, FaultServer  # noqa: E402
from treehop_test_doubles import BagOfWordsEmbedder  # noqa: E402

KEY = "sk-BENCHfaults-0f1e2d3c4b5a69788796a5b4"
AK, SK = "AKLTbenchFaultsAccess0123456789", "YmVuY2hGYXVsdHNTZWNyZXQwMTIzNDU2Nzg5"
RETRY = RetryPolicy(max_retries=1, backoff_s=0.05, max_backoff_s=0.2)
NO_DEADLINE = 1e6  # "no total deadline": only the per-read timeout applies


def run_case(dep: str, mode: str, deadline: float | None, index: Treehop) -> tuple[str, str]:
    """Run one call; return (outcome, all output text to search for keys)."""
    bodies: dict[str, Any] = {
        "wrong_len": lambda b: json.dumps({"data": [], "results": [], "code": 0}),
        "nan": lambda b: '{"data": [{"index": 0, "embedding": [NaN]}], "results": []}',
    }
    with FaultServer(mode, bodies) as srv:
        if dep == "embedder":
            emb = OpenAICompatibleEmbedder(
                "m",
                base_url=srv.base_url,
                api_key=KEY,
                dimension=1,
                timeout_s=1.0,
                deadline_s=deadline,
                retry=RETRY,
            )
            client = AsyncTreehop(embedder=emb, tagger=None)
            try:
                asyncio.run(client.find("hello world"))
                return "answered", ""
            except Exception as exc:
                return type(exc).__name__, "".join(traceback.format_exception(exc))
        if dep in ("http-rerank", "vikingdb-rerank"):
            rr: Any
            if dep == "http-rerank":
                rr = HTTPReranker(
                    srv.base_url, api_key=KEY, timeout_s=1.0, deadline_s=deadline, retry=RETRY
                )
            else:
                rr = VikingDBReranker(
                    ak=AK,
                    sk=SK,
                    host=srv.address,
                    scheme="http",
                    timeout_s=1.0,
                    deadline_s=deadline,
                    retry=RETRY,
                )
            index.aio.reranker = rr
            index.config.rerank_timeout_s = 1e5  # isolate the client's own deadline
            try:
                res = index.find("kubernetes pods", mode="thinking")
            finally:
                index.aio.reranker = None
            hit = res.resources[0]
            return ("fallback" if hit.rerank_fallback else "reranked"), res.model_dump_json()
        if dep == "planner":
            llm = OpenAICompatibleLLM(
                "m",
                base_url=srv.base_url,
                api_key=KEY,
                timeout_s=1.0,
                deadline_s=deadline,
                max_retries=1,
                backoff_s=0.05,
            )
            index.aio.intent_analyzer.llm = llm
            index.aio.intent_analyzer.timeout_s = 1e5
            try:
                res = index.search("kubernetes pods")
            finally:
                index.aio.intent_analyzer.llm = None
            plan = res.query_plan
            assert plan is not None
            return ("fallback" if plan.fallback else "planned"), res.model_dump_json()
        source = VikingDBKnowledgeSource(
            "kb",
            host=srv.address,
            scheme="http",
            ak=AK,
            sk=SK,
            timeout_s=1,
            retry=RETRY,
            deadline_s=deadline,
        )
        try:
            return "answered", source.find("kubernetes").model_dump_json()
        except Exception as exc:
            return type(exc).__name__, "".join(traceback.format_exception(exc))


def timed(fn: Callable[[], tuple[str, str]], cap: float) -> tuple[float | None, str, str]:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["out"] = fn()
        except Exception as exc:  # an untyped crash is an outcome too
            box["out"] = (f"CRASH {type(exc).__name__}", str(exc))

    t0 = time.monotonic()
    th = threading.Thread(target=target, daemon=True)
    th.start()
    th.join(cap)
    if th.is_alive():
        return None, "still waiting", ""
    outcome, text = box["out"]
    return time.monotonic() - t0, outcome, text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deadline", type=float, default=1.0)
    ap.add_argument("--cap", type=float, default=15.0)
    args = ap.parse_args()
    log = io.StringIO()
    handler = logging.StreamHandler(log)
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.DEBUG)
    index = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    index.add_resource("Kubernetes pods roll out.\n\nPause a rollout.", name="k8s", is_text=True)
    deps = ["embedder", "http-rerank", "vikingdb-rerank", "planner", "vikingdb-knowledge"]
    print(f"deadline_s={args.deadline:g}; no-deadline runs cut at {args.cap:g}s")
    print(f"{'dependency':<20}{'fault':<17}{'with deadline':>15}{'without':>10}  outcome / leak")
    worst = 0.0
    leaks = 0
    for dep in deps:
        for mode in MODES:
            t_with, outcome, text = timed(
                lambda d=dep, m=mode: run_case(d, m, args.deadline, index),
                args.cap,
            )
            slow = mode in ("hang", "trickle", "trickle_headers")
            t_without = (
                timed(
                    lambda d=dep, m=mode: run_case(d, m, NO_DEADLINE, index),
                    args.cap,
                )[0]
                if slow
                else None
            )
            leaked = any(s in text + log.getvalue() for s in (KEY, AK, SK))
            leaks += leaked
            worst = max(worst, t_with if t_with is not None else args.cap)
            w = f"{t_with:.2f}s" if t_with is not None else f">{args.cap:g}s"
            wo = "" if not slow else (f"{t_without:.2f}s" if t_without else f">{args.cap:g}s")
            print(
                f"{dep:<20}{mode:<17}{w:>15}{wo:>10}  {outcome}{'  KEY LEAKED' if leaked else ''}"
            )
    index.close()
    print(
        f"\nslowest call with deadline: {worst:.2f}s (deadline {args.deadline:g}s); "
        f"cases with a leaked key: {leaks}"
    )


if __name__ == "__main__":
    main()
