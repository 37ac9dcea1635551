"""A dropped object's close that fails with a ``BaseException`` that is no ``Exception`` is
logged redacted, not printed whole by the thread's excepthook (helper leftovers71a,
bench/README.md "(helper leftovers71a)"; attacks82's open item).

``integration_kit._close_logged`` caught ``Exception`` only: a plug-in's own
``BaseException`` subclass (or asyncio's ``CancelledError``) escaped the close thread, and
``threading.excepthook`` printed it, a registered key in its text, to stderr.

The first test fails on a62913ab; the second is a control.
"""

from __future__ import annotations

import pytest

from test_attacks82_close import _KEY

from treehop_test_doubles import child_process

_CHILD = r"""
import asyncio, logging, sys
from treehop import integration_kit as ik
from treehop.redaction import register_secret
logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(message)s")
register_secret(sys.argv[1])

class Halt(BaseException):
    pass

kind = {"halt": Halt, "cancelled": asyncio.CancelledError, "exit": SystemExit}[sys.argv[2]]

def close():
    raise kind(f"the server refused key {sys.argv[1]}")

ik.close_aside(close)
"""


@pytest.mark.parametrize(("kind", "name"), [("halt", "Halt"), ("cancelled", "CancelledError")])
def test_a_close_failing_with_a_base_exception_is_logged_without_its_key(
    kind: str, name: str
) -> None:
    # a62913ab: "Exception in thread treehop-close-dropped ... Halt: the server refused key
    # sk-..." on stderr, and no log line
    got = child_process(_CHILD, _KEY, kind, timeout=120)
    assert got.returncode == 0, got.stderr[-2000:]
    assert _KEY not in got.stderr and _KEY[:12] not in got.stderr, got.stderr[-2000:]
    shown = f"closing what a dropped object opened failed: {name}('the server refused key ***')"
    assert shown in got.stderr, got.stderr[-2000:]
    assert "Exception in thread" not in got.stderr


def test_control_a_close_raising_system_exit_ends_its_thread_quietly() -> None:
    # control (as on a62913ab): SystemExit in a thread ends it, nothing printed or logged
    got = child_process(_CHILD, _KEY, "exit", timeout=120)
    assert got.returncode == 0, got.stderr[-2000:]
    assert got.stderr == "", got.stderr[-2000:]
