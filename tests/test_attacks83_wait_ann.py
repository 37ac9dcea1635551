"""``EmbeddedStore.wait_ann``'s ``timeout`` as a caller spells it (helper attacks83).

``wait_ann(timeout=math.inf)`` -- "wait for good" -- reached ``Thread.join`` as given, whose
lock refuses it with ``OverflowError``: raw, and Python's join, interrupted that way while
the worker still ran, marks the thread stopped, so the next call started a second worker on
the same graph (``IndexError`` in ``_owners`` from the threads, then the process aborted:
"terminate called without an active exception"). The crash runs in a child, where it is a
return code and a stderr, not a dead test run.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.errors import StoreError
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded.ann_worker import _wait_seconds

from treehop_test_doubles import child_process, clustered_tree

_CHILD = r"""
import math, sys
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop_test_doubles import clustered_tree

nodes, v = clustered_tree(20, 150, 64)
s = EmbeddedStore(sys.argv[1], ann_min_rows=0, lexical=False)
s.upsert(nodes[:2000], v[:2000])
print("first", s.wait_ann(timeout=float(sys.argv[2])), flush=True)
s.upsert(nodes[2000:], v[2000:])  # (a worker of its own for the new rows)
print("second", s.wait_ann(timeout=None), flush=True)
print("hits", len(s.search(v[5], Scope(), 3)), flush=True)
s.close()
"""


@pytest.mark.parametrize("timeout", ["inf", "1e300"])
def test_a_wait_for_good_waits_and_leaves_one_worker(tmp_path: Path, timeout: str) -> None:
    run = child_process(_CHILD, str(tmp_path / "idx"), timeout)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Exception in thread" not in run.stderr, run.stderr[-2000:]
    assert run.stdout.split() == ["first", "True", "second", "True", "hits", "3"]


@pytest.mark.parametrize("bad", [math.nan, "5", True, b"1", [1], None])
def test_a_timeout_that_is_no_number_is_refused_typed(tmp_path: Path, bad: object) -> None:
    nodes, v = clustered_tree(2, 10, 16)
    s = EmbeddedStore(tmp_path / "idx", ann_min_rows=0, lexical=False)
    s.upsert(nodes, v)
    if bad is None:  # (control: None waits until the graph is done)
        assert s.wait_ann(timeout=None) is True
    else:
        with pytest.raises(StoreError, match="timeout must be a number of seconds"):
            s.wait_ann(timeout=bad)  # type: ignore[arg-type]
        assert s.wait_ann(timeout=None) is True  # (nothing left half-done)
    s.close()


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.floats(allow_nan=False),
        st.integers(min_value=-(2**2000), max_value=2**2000),
        st.fractions(),
        st.none(),
    )
)
def test_every_real_timeout_is_a_wait_join_takes(timeout: object) -> None:
    seconds = _wait_seconds(timeout)
    if seconds is not None:
        assert 0.0 <= seconds < threading.TIMEOUT_MAX
        assert seconds == (float(timeout) if timeout > 0 else 0.0)  # type: ignore[arg-type, operator]
    else:
        assert timeout is None or timeout >= threading.TIMEOUT_MAX  # type: ignore[operator]
