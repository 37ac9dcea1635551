"""CPU time of ``redact`` on attacks89's adversarial units, at 40,000 and 160,000 characters
(best of 3; linear reads ~4 in the last column, quadratic ~16). Benchmark-style, not a test
(the tests bound the patterns by construction): bench/README.md "(helper attacks89)".

    PYTHONPATH=retrieval python bench/attacks89_redaction_linear.py
"""

from __future__ import annotations

import time

from treehop.redaction import redact

UNITS = {
    "a\\n1-1-...-1 ": "a\n" + "1-" * 20 + "1 ",
    "a\\n111...1x ": "a\n" + "1" * 30 + "x ",
    "token: 'aaa...(70)' ": "token: '" + "a" * 70 + "' ",
    "token: 'token: '": "token: 'token: '",
    "access_token: '": "access_token: '",
}


def best(text: str) -> float:
    times = []
    for _ in range(3):
        start = time.process_time()
        redact(text)
        times.append(time.process_time() - start)
    return min(times) * 1000


def main() -> None:
    for name, unit in UNITS.items():
        small = best(unit * (40_000 // len(unit)))
        large = best(unit * (160_000 // len(unit)))
        print(f"| `{name}` | {small:.1f} | {large:.1f} | {large / small:.1f} |")


if __name__ == "__main__":
    main()
