"""Growth of ``treehop.redaction.redact`` on hostile inputs for the patterns helper attacks88
added or widened (the joined view of split keys, the short ``sk-`` lookaheads, the
``password: '`` form, the ``%5C%22`` stop): each input at n, 2n, 4n, 8n characters; the
ratio of the last time to the first is ~8 when linear, ~64 when quadratic.

    python bench/attacks88_redaction_linear.py [--n 20000]

Not a unit test (timings at a shared machine's load vary); a check to run by hand.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from treehop.redaction import redact, register_secret

INPUTS: dict[str, Callable[[int], str]] = {
    "zero-width between letters": lambda n: "a\u200b" * (n // 2),
    "zero-width escaped (repr)": lambda n: "a\\u200b" * (n // 7),
    "soft breaks a1=\\n": lambda n: "a1=\n" * (n // 4),
    "hard wraps a\\n1abc": lambda n: "a\n1abc" * (n // 6),
    "hard wrap, one long letter run": lambda n: "a\n" + "b" * n,
    "json escapes sk\\u002d": lambda n: "sk\\u002d" * (n // 8),
    "backslash run then u": lambda n: "\\" * n + "u002d",
    "pct %2D runs": lambda n: "sk%2D" * (n // 5),
    "pct %25 run then 2D": lambda n: "%" + "25" * (n // 2) + "2D",
    "sk- dashes (short key lookaheads)": lambda n: "sk-" + "a-" * (n // 2),
    "sk-A then letters": lambda n: "sk-A" + "a" * n,
    "--sk- repeated (a token start each)": lambda n: "--sk-" * (n // 5),
    "--sk-A1 repeated": lambda n: "--sk-A1" * (n // 7),
    "many sk-Ab tokens": lambda n: "sk-Ab1 " * (n // 7),
    "password: ' repeated": lambda n: "password: '" * (n // 11),
    "password: then spaces": lambda n: "password:" + " " * n + "x",
    "encoded value then %5C runs": lambda n: "password%3D" + "%5C" * (n // 3) + "%22",
    "encoded value then %5C%25 runs": lambda n: "password%3Dab%5C%" + "25" * (n // 2),
    "key split many times": lambda n: "sk-proj-" + "Ab3d\u200b" * (n // 5),
}


def best_of(f: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        f()
        best = min(best, time.process_time() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--registered", action="store_true", help="register a secret first")
    args = ap.parse_args()
    if args.registered:
        register_secret("sk-proj-Zz9yXx8wWv7uUt6sSr5qQp4oOn3mMl2k")
    sizes = [args.n, 2 * args.n, 4 * args.n, 8 * args.n]
    print("| input | " + " | ".join(f"{s:,} chars (ms)" for s in sizes) + " | 8n / n |")
    print("|---|" + "---|" * (len(sizes) + 1))
    for name, make in INPUTS.items():
        times = []
        for size in sizes:
            text = make(size)
            times.append(best_of(lambda text=text: redact(text)))
        ratio = times[-1] / max(times[0], 1e-6)
        cells = " | ".join(f"{t * 1000:.1f}" for t in times)
        print(f"| {name} | {cells} | {ratio:.1f} |", flush=True)


if __name__ == "__main__":
    main()
