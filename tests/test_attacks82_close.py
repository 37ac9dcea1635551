"""A dropped object's close that fails with an exception whose ``repr`` raises is logged
redacted, not printed whole by the thread's excepthook (helper attacks82, bench/README.md
"(helper attacks82)").

``integration_kit._close_logged`` logged ``redact(repr(exc))``; a ``repr`` that raised
escaped the handler, and ``threading.excepthook`` printed the traceback of the close's
exception with its text, a registered key in it, to stderr.

The first test fails on 4b7966c0; the second is a control.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import treehop

_KEY = "sk-attacks82SECRETvalue0123456789"

_CHILD = r"""
import logging, sys
from treehop import integration_kit as ik
from treehop.redaction import register_secret
logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s")
register_secret(sys.argv[1])

class NoRepr(Exception):
    def __repr__(self):
        raise ValueError("no repr")

class Plain(Exception):
    pass

kind = NoRepr if sys.argv[2] == "no-repr" else Plain

def close():
    raise kind(f"the server refused key {sys.argv[1]}")

ik.close_aside(close)
"""


def _run(kind: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(treehop.__file__).parents[1]), env.get("PYTHONPATH", "")]
    )
    return subprocess.run(
        [sys.executable, "-c", _CHILD, _KEY, kind],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_a_close_whose_exception_has_no_repr_is_logged_without_its_key() -> None:
    # 4b7966c0: "Exception in thread treehop-close-dropped ... NoRepr: the server refused
    # key sk-..." on stderr, and no log line
    got = _run("no-repr")
    assert got.returncode == 0, got.stderr[-2000:]
    assert _KEY not in got.stderr and _KEY[:12] not in got.stderr, got.stderr[-2000:]
    assert "closing what a dropped object opened failed: NoRepr (its repr raised)" in got.stderr
    assert "Exception in thread" not in got.stderr


def test_control_a_close_that_fails_is_logged_redacted() -> None:
    # control (as on 4b7966c0): the usual exception is logged with its key masked
    got = _run("plain")
    assert got.returncode == 0, got.stderr[-2000:]
    assert _KEY not in got.stderr
    assert "closing what a dropped object opened failed: Plain('the server refused key ***')" in (
        got.stderr
    )
