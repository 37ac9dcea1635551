"""Attacks on what stop 65 merged (helper attacks77): the store's read leases, the note on an
embedder's / summarizer's failure, exclude's matcher, LlamaIndex's ``custom_embedding_strs``,
LangChain filters refusing ``None``.

Each test but the two marked as controls fails on 9435b500 (see bench/README.md, helper
attacks77's section).
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llama_index.core.schema import QueryBundle

from langchain_treehop.filters import to_treehop_filter
from llama_index.retrievers.treehop import TreehopRetriever
from treehop import Treehop
from treehop.errors import EmbeddingError, InvalidFilterError, InvalidQueryError
from treehop.ingest.exclude import MAX_MIDDLE_NAMES, check_exclude
from treehop.redaction import register_secret
from treehop.stores.embedded import column_files as emb_columns

from treehop_test_doubles import BagOfWordsEmbedder

HERE = Path(__file__).resolve().parent

# ------------------------------------------------------------------ 1. read leases


def _links_to(path: Path) -> int:
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                n += 1
        except OSError:  # (the listing's own descriptor, closed meanwhile)
            pass
    return n


@pytest.mark.skipif(not emb_columns._LEASES, reason="no read leases on this platform")
def test_a_child_forked_while_a_lease_is_taken_keeps_none(tmp_path: Path) -> None:
    """A fork landing while another thread takes (or lets go) a read lease: the child must
    not keep the lease's descriptor (a long-lived child keeps every writer of the file
    waiting up to the kernel's lease-break-time). On 9435b500, 191 of 300 such children
    held it: the descriptor was open before it was in ``_HELD``, which the at-fork hook
    closes."""
    size = emb_columns._LEASE_BYTES
    f = tmp_path / "col.bin"
    f.write_bytes(b"\1" * size)
    mm = emb_columns._map_of(emb_columns._mapped(f, np.uint8, size))
    base = _links_to(f)  # (the map's own descriptor)
    stop = threading.Event()

    def reads() -> None:
        while not stop.is_set():
            with emb_columns._map_read(str(f), mm, size, size):
                pass

    t = threading.Thread(target=reads)
    t.start()
    kept = 0
    try:
        for _ in range(120):
            pid = os.fork()
            if pid == 0:  # (the child: how many descriptors of the file it has beyond the map)
                os._exit(min(max(_links_to(f) - base, 0), 100))
            _, status = os.waitpid(pid, 0)
            kept += os.waitstatus_to_exitcode(status) > 0
    finally:
        stop.set()
        t.join(30)
    assert kept == 0
    assert _links_to(f) == base and not emb_columns._HELD  # (the parent's let go too)


_WRITE_LEASE = r"""
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
fcntl.fcntl(fd, fcntl.F_SETOWN, 0)  # (no signal: the holder lets go only when it exits)
print("held", flush=True)
time.sleep(120)
"""


@pytest.mark.skipif(not emb_columns._LEASES, reason="no read leases on this platform")
def test_another_programs_write_lease_does_not_stall_a_read(tmp_path: Path) -> None:
    """Another program holding a write lease on the file (a Samba server's oplock): the
    read lease's ``open`` waited the kernel's lease-break-time (45 s here) -- and, with the
    fork lock above, every fork and leased read of the process with it. Now no lease is
    taken (the size check alone), at once."""
    f = tmp_path / "col.bin"
    f.write_bytes(b"\1" * 4096)
    holder = subprocess.Popen(
        [sys.executable, "-c", _WRITE_LEASE, str(f)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        t = time.monotonic()
        fd = emb_columns._read_lease(str(f))
        waited = time.monotonic() - t
    finally:
        holder.kill()
        holder.wait()
    if fd is not None:
        os.close(fd)
    assert fd is None and waited < 5, waited


@pytest.mark.skipif(not emb_columns._LEASES, reason="no read leases on this platform")
def test_leases_leave_no_descriptor_behind_on_errors(tmp_path: Path) -> None:
    """Control (passes on 9435b500 too): an error inside the read, a short map and many
    reads leave no descriptor open."""
    size = emb_columns._LEASE_BYTES
    f = tmp_path / "col.bin"
    f.write_bytes(b"\1" * size)
    mm = emb_columns._map_of(emb_columns._mapped(f, np.uint8, size))
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(200):
        with pytest.raises(KeyError), emb_columns._map_read(str(f), mm, size, size):
            raise KeyError("inside")
        with emb_columns._map_read(str(f), mm, size, size):
            pass
    with (
        pytest.raises(Exception, match="cut short"),
        emb_columns._map_read(str(f), mm, size + 1, size),
    ):
        pass
    assert len(os.listdir("/proc/self/fd")) == before and not emb_columns._HELD


# ------------------------------------------ 2. a failing plug-in's error refusing the note


def _recipe_store() -> Any:
    sys.path.insert(0, str(HERE / "store_conformance"))
    from store_conf_helpers import recipe_store_class

    return recipe_store_class()()


class _NotesNotAList(EmbeddingError):
    def __init__(self) -> None:
        super().__init__("embedder down")
        self.__notes__ = ("its own",)  # type: ignore[assignment]  # (add_note: TypeError)


class _NoNotes(EmbeddingError):
    def add_note(self, note: str) -> None:
        raise RuntimeError("this error takes no notes")


class _RaisingAttribute(EmbeddingError):
    @property
    def written(self) -> Any:  # (hasattr() of it raises, not AttributeError)
        raise RuntimeError("not readable")


class _FailingEmbedder(BagOfWordsEmbedder):
    """Raises ``error()`` from its second call on (after the folder's nodes were upserted)."""

    def __init__(self) -> None:
        super().__init__()
        self.error: Any = None
        self.n = 0

    def embed(self, texts: Any) -> np.ndarray:
        if self.error is not None:
            self.n += 1
            if self.n > 1:
                raise self.error()
        return super().embed(texts)


@pytest.mark.parametrize("error", [_NotesNotAList, _NoNotes, _RaisingAttribute])
def test_a_failure_refusing_the_note_stays_itself_and_the_next_write_runs(
    tmp_path: Path, error: type[EmbeddingError]
) -> None:
    """An embedder's own ``TreehopError`` passes through a write as it is; when it refuses
    the note ``end_journal`` adds (``__notes__`` not a list, its own ``add_note``, a
    property), the refusal replaced it (a raw ``TypeError`` / ``RuntimeError``) and the
    write's exit stopped there: the store's lock was never let go, and the client's next
    write failed with ``IndexLockedError`` after 10 s."""
    src = tmp_path / "d"
    src.mkdir()
    for i in range(5):
        (src / f"f{i}.md").write_text(f"file {i} about rotation " * 20)
    emb = _FailingEmbedder()
    store = _recipe_store()
    th = Treehop(embedder=emb, store=store)
    th.add_resource("seed about rotation", target_uri="viking://resources/seed.md")
    before = len(store._nodes)
    emb.error = error
    with pytest.raises(error):
        th.add_resource(src, target_uri="viking://resources/d")
    assert len(store._nodes) > before  # (the write changed the store first: a note was due)
    emb.error = None
    th.add_resource("after about rotation", target_uri="viking://resources/after.md")
    assert th.find("rotation", limit=50).resources


# ------------------------------------------------------------------ 3. exclude's matcher


_IGNORE_CASE = check_exclude(["a"]).file("A")
"""Whether the matcher ignores case (leftovers65b made it so, beside this branch): the
reference then reads fnmatch's expression with ``re.IGNORECASE`` too."""


def _name(name: str, glob: str) -> bool:
    """``fnmatch`` of one name: its own translation, matched as ``fnmatchcase`` does."""
    flags = re.IGNORECASE if _IGNORE_CASE else 0
    return re.match(fnmatch.translate(glob), name, flags) is not None


def _ref_segments(segs: list[str], names: list[str]) -> bool:
    if not segs:
        return not names
    if segs[0] == "**":
        if len(segs) == 1:  # (a trailing '**': what is below, one name or more)
            return len(names) >= 1
        return any(_ref_segments(segs[1:], names[k:]) for k in range(len(names) + 1))
    return bool(names) and _name(names[0], segs[0]) and _ref_segments(segs[1:], names[1:])


def _reference(pattern: str, rel: str, folder: bool) -> bool:
    """The documented rules, slowly: ``fnmatch`` per name, ``**`` any number of names."""
    anchored = pattern.startswith("./")
    body = pattern[2:] if anchored else pattern
    if body.endswith("/"):
        if not folder:
            return False
        body = body[:-1]
    segs, names = body.split("/"), rel.split("/")
    if not anchored and len(segs) == 1:
        return _name(names[-1], segs[0])
    return _ref_segments(segs, names)


_CHARS = list("abA.-!^]*?[")
_PATTERNS = st.builds(
    lambda top, segs, slash: ("./" if top else "") + "/".join(segs) + ("/" if slash else ""),
    st.booleans(),
    st.lists(
        st.one_of(
            st.just("**"), st.lists(st.sampled_from(_CHARS), min_size=1, max_size=6).map("".join)
        ),
        min_size=1,
        max_size=4,
    ),
    st.booleans(),
)
_PATHS = st.lists(
    st.lists(st.sampled_from(_CHARS), min_size=1, max_size=5).map("".join), min_size=1, max_size=5
).map("/".join)


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(_PATTERNS, _PATHS, st.booleans())
def test_exclude_matches_as_fnmatch_per_name(pattern: str, rel: str, folder: bool) -> None:
    """Control (passes on 9435b500: 50,000 examples found no difference): attacks76's
    rewritten matcher against the rules read slowly."""
    try:
        ex = check_exclude([pattern])
    except InvalidQueryError:  # (refused patterns: [z-a], an empty segment, three '**')
        return
    got = ex.folder(rel) if folder else ex.file(rel)
    assert got == _reference(pattern, rel, folder)


def test_middle_names_bound_is_for_all_patterns_together() -> None:
    """Control: 64 names between two '**' in all are taken, 65 refused, split or not."""
    check_exclude(["**/" + "/".join(["a"] * MAX_MIDDLE_NAMES) + "/**"])
    with pytest.raises(InvalidQueryError, match="over 64 names"):
        check_exclude(["**/" + "/".join(["a"] * 32) + "/**", "**/" + "/".join(["a"] * 33) + "/**"])


# ------------------------------------------------- 4. LlamaIndex custom_embedding_strs


class _CountingEmbedder(BagOfWordsEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.queries = 0
        self.short_every_other = False

    def embed_query(self, text: str) -> Any:
        self.queries += 1
        v = super().embed_query(text)
        return v[:-1] if self.short_every_other and self.queries % 2 else v

    async def aembed_query(self, text: str) -> Any:
        return self.embed_query(text)


@pytest.fixture
def counted() -> Any:
    emb = _CountingEmbedder()
    th = Treehop(embedder=emb, tagger=None)
    th.add_resource("To roll back a release run helm rollback.", target_uri="viking://resources/a")
    yield th, emb
    th.close()


def _both(retriever: TreehopRetriever, bundle: QueryBundle) -> list[BaseException]:
    out: list[BaseException] = []
    for call in (
        lambda: retriever.retrieve(bundle),
        lambda: asyncio.run(retriever.aretrieve(bundle)),
    ):
        try:
            call()
        except BaseException as exc:  # (each compared below)
            out.append(exc)
    return out


@pytest.mark.parametrize(
    "strs",
    [5, (t for t in ["helm rollback"]), {"helm rollback": 1}, {"helm rollback"}, b"helm"],
    ids=["int", "generator", "dict", "set", "bytes"],
)
def test_embedding_strs_that_are_not_a_list_are_refused_typed(counted: Any, strs: Any) -> None:
    """An int was a raw ``TypeError``; a generator was read twice (the second time empty)
    and came back as numpy's raw ``ValueError``; a dict's keys or a set were searched."""
    th, emb = counted
    retriever = TreehopRetriever(th, similarity_top_k=2)
    bundle = QueryBundle(query_str="q", custom_embedding_strs=strs)
    errors = _both(retriever, bundle)
    assert len(errors) == 2 and all(type(e) is InvalidQueryError for e in errors), errors
    assert "list of strings" in str(errors[0]) and emb.queries == 0


def test_too_many_embedding_strs_are_refused_before_any_embedding(counted: Any) -> None:
    """20,000 texts were 20,000 embedder calls (5.8 s with a local model, a request each
    with a remote one) before the search."""
    th, emb = counted
    retriever = TreehopRetriever(th, similarity_top_k=2)
    bundle = QueryBundle(query_str="q", custom_embedding_strs=["helm rollback"] * 5000)
    errors = _both(retriever, bundle)
    assert len(errors) == 2 and all(type(e) is InvalidQueryError for e in errors), errors
    assert "5000 texts" in str(errors[0]) and emb.queries == 0
    few = QueryBundle(query_str="q", custom_embedding_strs=["helm rollback", "release"])
    assert retriever.retrieve(few) and emb.queries == 2  # (a few are embedded, one call each)


def test_embedding_strs_of_two_sizes_are_an_embedding_error(counted: Any) -> None:
    """An embedder answering vectors of two sizes was numpy's raw ``ValueError``."""
    th, emb = counted
    emb.short_every_other = True
    retriever = TreehopRetriever(th, similarity_top_k=2)
    bundle = QueryBundle(query_str="q", custom_embedding_strs=["helm rollback", "release"])
    errors = _both(retriever, bundle)
    assert len(errors) == 2 and all(isinstance(e, EmbeddingError) for e in errors), errors


# ------------------------------------------------------ 5. LangChain filters and None


@pytest.mark.parametrize(
    "spec",
    [
        {"KEY": None},
        {"KEY": {"$ne": None}},
        {"$or": [{"lang": "en"}, {"$and": [{"a": 1}, {"KEY": {"$in": ["x", None]}}]}]},
    ],
)
def test_a_none_refusal_does_not_echo_a_registered_key(spec: dict[str, Any]) -> None:
    """A registered key pasted as a field name reached the ``None`` refusal whole."""
    secret = "lc-field-secret-7f3a9c2e11"
    register_secret(secret)

    def swap(x: Any) -> Any:
        if isinstance(x, dict):
            return {(secret if k == "KEY" else k): swap(v) for k, v in x.items()}
        if isinstance(x, list):
            return [swap(v) for v in x]
        return x

    with pytest.raises(InvalidFilterError) as ei:
        to_treehop_filter(swap(spec))
    assert secret not in str(ei.value) and "$exists" in str(ei.value)


@pytest.mark.parametrize("value", [10**5000, -(2**1100)], ids=["5000-digits", "minus-2**1100"])
def test_a_huge_integer_in_a_filter_is_refused_typed(value: int) -> None:
    """``{"a": 10**5000}`` passed the LangChain filter and the core's parse, then find()'s
    cache key (the filter's JSON text) raised Python's raw ``ValueError`` (4,300 digits)."""
    with pytest.raises(InvalidFilterError, match="within float range"):
        to_treehop_filter({"$or": [{"a": value}, {"b": {"$nin": ["x", value]}}]})
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        th.add_resource("hello world", target_uri="viking://resources/a")
        with pytest.raises(InvalidFilterError, match="an integer of"):
            th.find("hello", filter={"op": "must", "field": "a", "conds": [value]})
        within = th.find("hello", filter={"op": "must", "field": "a", "conds": [2**1000]})
        assert within.resources == []  # (1,000 bits: taken, and nothing holds it)
    finally:
        th.close()
