"""What the MCP server's gate (``treehop.mcp_server._screen``) costs a line, by kind of line.

Why (helper leftovers68c, after attacks79's note): the gate parses each request once with
the SDK's request model, and a second time with the SDK's union of four message models when
the line *may* hold a ``"result"`` / ``"error"`` key (a key may spell a letter as a ``\\u``
escape), so every request with non-ASCII text written by an ``ensure_ascii`` client (Python's
``json.dumps``) paid the second parse. This prints the fastest time of ``_screen`` per line
kind, and the SDK's own parse of the same line for scale (what its stdio reader does anyway).

    python bench/bench_mcp_gate_parse.py            # ~10 s
    python bench/bench_mcp_gate_parse.py --repeat 20

The lines: a short ASCII ``find``; the same with non-ASCII text escaped (``ensure_ascii``); a
``find`` whose query ends in the word "error" (``error"``); a ``find`` of 1.9 M characters
with escapes; a 1 MB ASCII one; a request beside a ``"result"`` key (the union must decide:
a control).
"""

from __future__ import annotations

import argparse
import json
import timeit
from collections.abc import Callable
from functools import partial


def _call(query: str, *, ascii_only: bool = True, extra: dict[str, object] | None = None) -> str:
    message: dict[str, object] = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "find", "arguments": {"query": query, "limit": 5}},
    }
    return json.dumps({**message, **(extra or {})}, ensure_ascii=ascii_only)


LINES = {
    "short ASCII": _call("how do I rotate the backup keys"),
    "short, \\u escapes": _call("wie drehe ich die Sicherungsschlüssel? 鍵の更新"),
    'short, ends "error"': _call("what does this error"),
    "1.9 M chars, \\u escapes": _call("Schlüssel ü " * 85_000),
    "1 MB ASCII": _call("backup keys " * 85_000),
    'short, a "result" key': _call("keys", extra={"result": {}}),
}


def _best_us(fn: Callable[[], object], chars: int, repeat: int) -> float:
    """The fastest of ``repeat`` timings of ``fn`` (each a batch of calls of about 200,000
    characters in all, so that a short line's microseconds are above the clock's noise), in
    microseconds a call: the least disturbed by the other sessions on the machine."""
    batch = max(1, 200_000 // chars)
    return min(timeit.repeat(fn, number=batch, repeat=repeat)) / batch * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--repeat", type=int, default=30, help="timings a line (the fastest is shown)"
    )
    args = parser.parse_args()
    from mcp_types import jsonrpc_message_adapter

    from treehop.mcp_server import _screen

    for line in LINES.values():  # (imports and warm-up)
        _screen(line)
    print(f"{'line':24} {'chars':>9} {'_screen us':>11} {'SDK parse us':>13} {'ratio':>6}")
    for name, line in LINES.items():
        assert _screen(line).answer is None, name
        gate = _best_us(partial(_screen, line), len(line), args.repeat)
        sdk_parse = partial(jsonrpc_message_adapter.validate_json, line, by_name=False)
        sdk = _best_us(sdk_parse, len(line), args.repeat)
        print(f"{name:24} {len(line):>9,} {gate:>11.1f} {sdk:>13.1f} {gate / sdk:>6.2f}")


if __name__ == "__main__":
    main()
