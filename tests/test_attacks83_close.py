"""A dropped object's close that fails with a ``BaseException`` that is no ``Exception`` is
logged redacted, not printed whole by the thread's excepthook (helper attacks83; attacks82's
open item, bench/README.md "(helper attacks82)").

``integration_kit._close_logged`` caught ``Exception`` only: a plug-in's close raising its
own ``BaseException`` subclass (or ``KeyboardInterrupt`` / ``GeneratorExit`` raised by hand)
reached ``threading.excepthook``, which printed the traceback and the exception's text, a
registered key in it, to stderr. The test fails on a62913ab for each kind.
"""

from __future__ import annotations

import pytest

from test_attacks82_close import _CHILD, _KEY

from treehop_test_doubles import child_process

_BASE_CHILD = _CHILD.replace(
    'kind = NoRepr if sys.argv[2] == "no-repr" else Plain',
    "class PluginAbort(BaseException):\n    pass\n\n"
    'kind = {"abort": PluginAbort, "interrupt": KeyboardInterrupt, '
    '"generator-exit": GeneratorExit}[sys.argv[2]]',
)


@pytest.mark.parametrize("kind", ["abort", "interrupt", "generator-exit"])
def test_a_close_raising_a_base_exception_is_logged_without_its_key(kind: str) -> None:
    got = child_process(_BASE_CHILD, _KEY, kind, timeout=120)
    assert got.returncode == 0, got.stderr[-2000:]
    assert _KEY not in got.stderr and _KEY[:12] not in got.stderr, got.stderr[-2000:]
    assert "Exception in thread" not in got.stderr, got.stderr[-2000:]
    assert "closing what a dropped object opened failed: " in got.stderr
    assert "the server refused key ***" in got.stderr
