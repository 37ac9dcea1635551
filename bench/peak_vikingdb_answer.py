"""Peak memory of one ``VikingDBKnowledgeSource.find`` against a hostile answer (attacks60).

A loopback server answers ``search_knowledge`` with 1 GiB of spaces: gzipped once (``gzip``,
~1 MB on the wire), twice (``gzip2``, ``Content-Encoding: gzip, gzip``) or plain (``plain``,
no length, read to close). Prints the error, the seconds and the process's peak RSS (VmHWM).
Run it on two checkouts to compare (bench/README.md, "Adversarial pass (helper attacks60)"):

    PYTHONPATH=retrieval:tests python bench/peak_vikingdb_answer.py gzip
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "tests")]

from test_attacks60 import answer_server, gzip_of_spaces, http_answer, knowledge_source  # noqa: E402
from treehop.errors import TreehopError  # noqa: E402


def main(kind: str) -> None:
    if kind == "plain":
        spaces = b" " * (1 << 20)

        def answer():  # type: ignore[no-untyped-def]
            yield b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
            for _ in range(1024):
                yield spaces

    else:
        body = gzip_of_spaces(1024, 2 if kind == "gzip2" else 1)
        coding = "gzip, gzip" if kind == "gzip2" else "gzip"

        def answer():  # type: ignore[no-untyped-def]
            return http_answer(body, coding)

    host, srv = answer_server(answer)
    source = knowledge_source(host)
    t0 = time.perf_counter()
    try:
        source.find("hello")
        print("read")
    except TreehopError as exc:
        print(type(exc).__name__, str(exc)[:160])
    finally:
        srv.close()
    print(f"seconds {time.perf_counter() - t0:.1f}")
    with open("/proc/self/status") as f:
        print("peak MB", int(next(ln for ln in f if ln.startswith("VmHWM:")).split()[1]) // 1024)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "gzip")
