"""Hostile input against treehop's current surface, in process (helper attacks90).

Every public ``Treehop`` call, the LangChain and LlamaIndex wrappers, the MCP server's line
screen and the CLI's ``--filter`` parser are called with hostile values: vendor keys (whole,
split by a space, in a URI's query, as a name, a tag, a filter field), huge and odd Unicode
(1 MB of combining marks, RTL overrides, lone surrogates, NUL), odd types, odd numbers and
deep or duplicated JSON. Each answer is checked:

- only a ``TreehopError`` subclass escapes (or a result);
- no piece (16 characters) of any key reaches an error's text or a log line (a result
  returns what the caller stored: not read);
- every call answers within its budget (a quadratic path would not).

Prints one line per break and a summary; exit status 1 when anything broke.

    PYTHONPATH=retrieval:integrations:tests python bench/attacks90_attack.py
"""

from __future__ import annotations

import io
import json
import logging
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from treehop import Treehop
from treehop.errors import TreehopError
from vendor_keys import VENDOR_KINDS, vendor_key

from treehop_test_doubles import BagOfWordsEmbedder

KEYS = [vendor_key(kind, 9090) for kind in VENDOR_KINDS]
PIECES = [k[i : i + 16] for k in KEYS for i in range(len(k) // 2, len(k) - 15, 16)]
BUDGET_S = 3.0
breaks: list[str] = []
calls = 0

log_text = io.StringIO()
handler = logging.StreamHandler(log_text)
logging.getLogger().addHandler(handler)
logging.getLogger().setLevel(logging.DEBUG)


def _leaks(text: str) -> str | None:
    for piece in PIECES:
        if piece in text:
            return piece
    return None


def attempt(label: str, fn: Callable[[], Any]) -> None:
    """Run ``fn``; record a break for a non-Treehop exception, a leak or a slow answer."""
    global calls
    calls += 1
    start = time.process_time()
    try:
        fn()
        # (a result is not read for keys: a key the caller stored, as a memory's text, a
        # name or a tag, is the caller's data, returned as written; attacks88/89's decision)
        shown = ""
    except TreehopError as exc:
        shown = f"{type(exc).__name__}: {exc}"
    except Exception as exc:
        tb = traceback.format_exc(limit=3)
        breaks.append(f"{label}: {type(exc).__name__} escaped: {str(exc)[:200]!r}\n{tb}")
        return
    took = time.process_time() - start
    if took > BUDGET_S:
        breaks.append(f"{label}: {took:.1f} s CPU")
    leaked = _leaks(shown)
    if leaked:
        breaks.append(f"{label}: key piece {leaked[:4]}... in {shown[:160]!r}")


def split(key: str) -> str:
    return key[: len(key) // 2] + " " + key[len(key) // 2 :]


HOSTILE_TEXT = [
    *KEYS,
    *(split(k) for k in KEYS),
    "\u0301" * 1_000_000,
    "\u202e" + "evil" * 1000,
    "\ud800abc",
    "a\x00b",
    "x" * 3_000_000,
    "🙂" * 200_000,
    "",
    " ",
]
HOSTILE_URIS = [
    *(f"viking://resources/{k}" for k in KEYS[:3]),
    *(f"viking://resources/x?api_key={k}" for k in KEYS[:3]),
    f"https://bob:{KEYS[0]}@host/x",
    "viking://resources/" + "\u0301" * 5000,
    "viking://resources/\ud800",
    "viking://resources/" + "a/" * 5000,
    "viking://resources/%00",
]
ODD = [None, True, -1, 2**70, float("nan"), float("inf"), "3", [], {}, b"x", object()]


def python_api(c: Treehop) -> None:
    for t in HOSTILE_TEXT:
        attempt(f"find({t[:12]!r})", lambda t=t: c.find(t, limit=3))
        attempt(f"search({t[:12]!r})", lambda t=t: c.search(t, limit=3))
        attempt(f"add_memory({t[:12]!r})", lambda t=t: c.add_memory(t[:100_000]))
        attempt(f"tags=[{t[:12]!r}]", lambda t=t: c.find("q", tags=[t]))
        attempt(
            f"set_tags add {t[:12]!r}", lambda t=t: c.set_tags("viking://resources/a.md", add=t)
        )
        attempt(f"name={t[:12]!r}", lambda t=t: c.add_resource("body", is_text=True, name=t))
        attempt(f"create/get_session({t[:12]!r})", lambda t=t: c.get_session(t))
    for u in HOSTILE_URIS:
        for call in ("ls", "read", "tree", "stat", "remove"):
            attempt(f"{call}({u[:40]!r})", lambda u=u, call=call: getattr(c, call)(u))
        attempt(f"find target {u[:40]!r}", lambda u=u: c.find("q", target_uri=u))
        attempt(f"set_tags {u[:40]!r}", lambda u=u: c.set_tags(u, add="x"))
    for v in ODD:
        for opt in ("limit", "since", "until", "filter", "tags", "target_uri", "score_threshold"):
            attempt(f"find {opt}={v!r:.20}", lambda v=v, opt=opt: c.find("q", **{opt: v}))
        attempt(f"tree depth={v!r:.20}", lambda v=v: c.tree("viking://resources", depth=v))
        attempt(f"assemble max_tokens={v!r:.20}", lambda v=v: c.assemble_context("q", max_tokens=v))
    for k in KEYS[:3]:
        filters = [
            {"op": "must", "field": k, "conds": ["x"]},
            {"op": "must", "field": "team", "conds": [k]},
            {"op": k, "field": "team", "conds": ["x"]},
            {"op": "range", "field": "n", "gt": k},
            {k: 1},
        ]
        for f in filters:
            attempt(f"filter {str(f)[:40]}", lambda f=f: c.find("q", filter=f))
    attempt("find unknown kwarg key", lambda: c.find("q", **{KEYS[0]: 1}))


def cli_filters() -> None:
    from treehop.cli._app import _parse_filter

    for k in KEYS[:3]:
        for text in (
            json.dumps({k: 1})[:-1] + f', "{k}": 2}}',
            '{"op": "must", "field": "' + k + '"',
            '{"a": ' + "[" * 3000 + "]" * 3000 + "}",
            '{"n": 1' + "0" * 5000 + "}",
        ):
            attempt(f"--filter {text[:30]!r}", lambda text=text: _parse_filter(text))


def mcp_screen() -> None:
    from treehop.mcp_server import _screen

    def call(filter_text: str, rid: Any = 1) -> str:
        head = f'{{"jsonrpc": "2.0", "id": {json.dumps(rid)}, "method": "tools/call", "params": '
        return (
            head + '{"name": "find", "arguments": {"query": "q", "filter": ' + filter_text + "}}}"
        )

    lines = [
        call('{"op": "must", "field": "a", "field": "b", "conds": [1]}'),
        call('{"op": "and", "conds": [{"x": 1, "x": 2}]}'),
        call('{"\\u0066ield": "a", "field": "b"}'),
        call("[" * 100_000 + "]" * 100_000),
        call('{"op": "must", "field": "' + KEYS[0] + '", "field": "' + KEYS[1] + '"}'),
        call('{"' + KEYS[0] + '": 1, "' + KEYS[0] + '": 2}'),
        call('{"a": 1' + "0" * 5000 + ', "a": 2}'),
        call('{"a": 1, "a": 2}', rid="x" * 100_000),
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ' + "{" * 400,
    ]
    for line in lines:
        attempt(f"mcp {line[70:110]!r}", lambda line=line: _screen(line).answer)


def wrappers(c: Treehop) -> None:
    try:
        from langchain_treehop import TreehopRetriever
    except ImportError as exc:
        breaks.append(f"langchain wrapper not importable: {exc}")
        return
    r = TreehopRetriever(client=c)
    for t in HOSTILE_TEXT[:14]:
        attempt(f"lc invoke {t[:12]!r}", lambda t=t: r.invoke(t))
    for k in KEYS[:2]:
        attempt("lc filter key", lambda k=k: r.invoke("q", filter={k: 1}))
        attempt("lc target key", lambda k=k: r.invoke("q", target_uri=f"viking://resources/{k}"))
    try:
        from llama_index.retrievers.treehop import TreehopRetriever as LIRetriever
    except ImportError as exc:
        breaks.append(f"llamaindex wrapper not importable: {exc}")
        return
    li = LIRetriever(client=c)
    for t in HOSTILE_TEXT[:14]:
        attempt(f"li retrieve {t[:12]!r}", lambda t=t: li.retrieve(t))


def store_paths() -> None:
    import tempfile

    base = tempfile.mkdtemp(prefix="attacks90-")
    for p in (
        f"{base}/{KEYS[0]}",
        f"{base}/a\x00b",
        f"{base}/" + "d" * 5000,
        "/proc/self/status",
        "/dev/null",
        f"{base}/\ud800",
    ):

        def open_it(p: str = p) -> Any:
            c = Treehop(p, embedder=BagOfWordsEmbedder(), tagger=None)
            try:
                return c.find("q")
            finally:
                c.close()

        attempt(f"Treehop({p[-20:]!r})", open_it)


def main() -> int:
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    c.add_resource("Roll back with kubectl rollout undo.", is_text=True, name="a.md")
    t0 = time.perf_counter()
    python_api(c)
    cli_filters()
    mcp_screen()
    wrappers(c)
    store_paths()
    c.close()
    leaked = _leaks(log_text.getvalue())
    if leaked:
        breaks.append(f"log: key piece {leaked[:4]}... logged")
    for b in breaks:
        print("BREAK", b)
    print(f"{calls} calls, {len(breaks)} breaks, {time.perf_counter() - t0:.1f} s")
    return 1 if breaks else 0


if __name__ == "__main__":
    sys.exit(main())
