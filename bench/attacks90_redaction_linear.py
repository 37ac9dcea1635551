"""CPU time of ``redact`` on texts built to make the space-split pass (helper attacks90's
``_redact_spaced``) work hardest, at n and 4n characters (linear: 4x, quadratic: 16x).

    PYTHONPATH=retrieval python bench/attacks90_redaction_linear.py [--n 40000]

Run with the base's ``retrieval`` on ``PYTHONPATH`` for the same texts before the change.
"""

from __future__ import annotations

import argparse
import time

from treehop.redaction import redact

UNITS = {
    "prefixed head, key-like tail": "sk-A1 Abcdefg1 ",
    "prefixes in one token, then a tail": None,  # (one token of n characters)
    "key-like heads, no tail": "sk-Ab1 ",
    "chain of key-like tails": "Abcdefg1 ",
    "prose with a vendor prefix": "the sk-learn docs say user42 v10 2024-01-01 ",
    "prose, no prefix": "the quick brown fox jumps over the lazy dog ",
}


def text(name: str, n: int) -> str:
    if name == "prefixes in one token, then a tail":
        return "sk-" * (n // 3) + " Abcdefgh1"
    if name == "chain of key-like tails":
        return "sk-proj-A1 " + UNITS[name] * (n // len(UNITS[name]))  # type: ignore[operator]
    unit = UNITS[name]
    assert unit is not None
    return unit * (n // len(unit))


def best(s: str, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.process_time()
        redact(s)
        times.append(time.process_time() - t)
    return min(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=40_000)
    n = parser.parse_args().n
    print(f"| input | {n:,} (ms) | {4 * n:,} (ms) | 4n/n |")
    print("|---|---|---|---|")
    for name in UNITS:
        a, b = best(text(name, n)), best(text(name, 4 * n))
        print(f"| {name} | {a:.1f} | {b:.1f} | {b / a:.1f} |")


if __name__ == "__main__":
    main()
