"""The keyword tagger's large batches on two cores: one sub-batch in a second process.

Why: at ingest the keyword tagger analyses, counts and scores every new leaf, and it is
Python and numpy on one core holding the interpreter lock (~10 s of a 100k-leaf ingest, 44% of
it: ``bench/bench_ingest.py --part nodes --stages``). Threads cannot share that work; a second
interpreter can. A large batch is cut at a part boundary into two sub-batches:

1. this process starts a Python running this module (:func:`worker_command`) and sends it the
   second sub-batch's texts (about half the characters); while it analyses and counts them,
   this process does the first;
2. it sends back its sub-batch's atoms, term keys and document frequencies (a few thousand
   words and two integer arrays; its counts stay there), and the cut of its texts when an
   ingest's BM25 index will reuse it; this process merges both into the statistics, in order;
3. it gets the merged frequencies of its terms and scores its documents while this process
   scores the first sub-batch; its tags come back.

Results do not depend on which process did what: the statistics are merged the same way
when this process counts the second sub-batch itself, and the tags equal a one-batch fit's
(``tests/test_tagging_second_process.py``). Where the split point lies depends only on the
texts. A worker that cannot start, dies, answers with an error or something unreadable, or
does not answer in time (:func:`_wait_s`) is stopped, and this process does its part itself:
a failure costs time, never a result. Nothing is spawned with ``multiprocessing``: a script
that ingests needs no ``if __name__ == "__main__":`` guard.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import selectors
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import IO, Any, Final

import numpy as np
from numpy.typing import NDArray

from ..text_tokenize import offer_cut, wants_cut
from . import keywords
from .keywords import KeywordTagger, _Atoms, _BatchCounts, _count_batch, _Cut, _part_bounds

__all__ = ["fit_extract", "split_point"]

SPLIT_MIN_CHARS: Final = 16 << 20
"""A batch is split from this many characters of text (~37k leaves of the bench tree), where
each half takes seconds: a worker costs a process start and two exchanges."""
WORKER_SHARE: Final = 0.5
"""The worker's share of the batch's characters. It starts ~0.2 s late (:data:`_BOOT`) and
this process numbers both halves: at 100k leaves on 2 cores, alternating runs of the whole
fit took 6.1-6.8 s at 50%, 6.8-7.0 s at 45% and 7.2-7.3 s at 55% (one process: 9.7-11.9 s)."""
WAIT_FLOOR_S: Final = 30.0
WAIT_FACTOR: Final = 4.0
"""The worker's answers are awaited max(:data:`WAIT_FLOOR_S`, :data:`WAIT_FACTOR` x this
process's own part of the step) (see :func:`_wait_s`)."""
_HEADER: Final = struct.Struct("<Q")
_MAX_FRAME: Final = 1 << 34
"""Frames are length-prefixed pickles; a length beyond this (16 GiB) is a broken stream."""


class WorkerFailed(Exception):
    """The second process gave no usable answer (internal: this process does its part)."""


def split_point(texts: Sequence[str]) -> int | None:
    """Where a batch is cut (the worker takes ``texts[at:]``), or None when it is not: under
    :data:`SPLIT_MIN_CHARS` characters, or a single part. A part boundary near the
    :data:`WORKER_SHARE` of the characters; the same texts always cut alike."""
    lens = np.fromiter(map(len, texts), np.int64, len(texts))
    total = int(lens.sum())
    if total < SPLIT_MIN_CHARS:
        return None
    bounds = _part_bounds(texts, keywords._PART_CHARS)
    inner = np.asarray(bounds[1:-1], dtype=np.int64)
    if not inner.size:
        return None
    before = np.concatenate(([0], np.cumsum(lens)))[inner]
    return int(inner[np.argmin(np.abs(before - (1.0 - WORKER_SHARE) * total))])


def _cores() -> int:
    """The CPUs this process may run on (a process limited to one never splits)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on every platform)
        return os.cpu_count() or 1


def fit_extract(
    tagger: KeywordTagger, fit_texts: Sequence[str], texts: Sequence[str]
) -> list[list[str]]:
    """``tagger.partial_fit_extract(fit_texts, texts)``; when both are one large batch of a
    TF-IDF tagger, on two cores (see the module docstring): the same frequencies and tags."""
    at = None
    if (
        tagger.method == "tfidf"
        and not isinstance(texts, str)
        and _cores() >= 2
        and all(isinstance(t, str) for t in texts)
        and list(fit_texts) == list(texts)
    ):
        at = split_point(texts)
    if at is None:  # (bad input gets the one-process fit's TaggerError)
        return tagger.partial_fit_extract(fit_texts, texts)
    texts = list(texts)
    keep_cut = wants_cut(len(texts))
    worker = _Worker.start(texts[at:], tagger.bigrams, keep_cut)
    try:
        return _split_fit_extract(tagger, texts, at, keep_cut, worker)
    finally:
        if worker is not None:
            worker.close()


def _split_fit_extract(
    tagger: KeywordTagger, texts: list[str], at: int, keep_cut: bool, worker: _Worker | None
) -> list[list[str]]:
    """The three steps of the module docstring; each of the worker's is done here instead
    when it fails (``worker`` None: all of them)."""
    t0 = time.monotonic()
    first = _count_batch(texts[:at], tagger.bigrams, keep_cut)
    gid_first = tagger._number_batch(first)  # (while the worker may still be counting)
    second: _BatchCounts | None = None
    if worker is not None:
        try:
            second = worker.counts(_wait_s(time.monotonic() - t0), len(texts) - at)
        except WorkerFailed:
            worker = None
    if second is None:
        second = _count_batch(texts[at:], tagger.bigrams, keep_cut)
    gid_second = tagger._number_batch(second)
    tagger._fit_batches([first, second], [gid_first, gid_second])
    params, n_docs, df_second = tagger.params(), tagger.n_docs, tagger._df[gid_second]
    if worker is not None:
        try:
            worker.send_scores(params, n_docs, df_second)
        except WorkerFailed:
            worker = None
    t0 = time.monotonic()
    scorer = KeywordTagger._batch_scorer(params, n_docs, first, tagger._df[gid_first])
    labels = scorer._batch_tags(first)
    tags_second: list[list[str]] | None = None
    if worker is not None:
        with contextlib.suppress(WorkerFailed):
            tags_second = worker.tags(_wait_s(time.monotonic() - t0), second.n_docs)
    if tags_second is None:
        if not second.counted:  # (its counts were the worker's: counted again, alike)
            second = replace(_count_batch(texts[at:], tagger.bigrams, False), cut=second.cut)
        scorer = KeywordTagger._batch_scorer(params, n_docs, second, df_second)
        tags_second = scorer._batch_tags(second)
    cuts = [(offset, b.cut) for offset, b in ((0, first), (at, second)) if b.cut is not None]
    if keep_cut and cuts:
        _offer_merged_cut(texts, cuts)
    return labels + tags_second


def _wait_s(own_s: float) -> float:
    """How long to wait for the worker's half, given this process's own half took
    ``own_s``: past that, doing it here is cheaper than waiting on."""
    return max(WAIT_FLOOR_S, WAIT_FACTOR * own_s)


def _latin_form(text: str) -> str:
    """The text :func:`keywords._mixed_columns` analyses for a Latin text (and puts in the
    cut): the same object for an ASCII one, which the BM25 index finds again by identity; a
    new, normalised string for another, which it never finds (it cuts that text itself)."""
    return text if text.isascii() else keywords._normalised(text)


def _offer_merged_cut(texts: list[str], cuts: list[tuple[int, _Cut]]) -> None:
    """Offer sub-batches' cuts (each with its first text's position in ``texts``; a
    sub-batch without a Latin text has none) as the one cut a one-process fit offers: each
    one's new distinct chunks numbered after those before it, in its order."""
    ids: dict[str, int] = {}
    cut_texts: list[str] = []
    occs: list[NDArray[np.int64]] = []
    for offset, (pos, chunks, occ) in cuts:
        fresh = [c for c in chunks if c not in ids]
        ids.update(zip(fresh, range(len(ids), len(ids) + len(fresh)), strict=True))
        occs.append(np.fromiter(map(ids.__getitem__, chunks), np.int64, len(chunks))[occ])
        cut_texts += [_latin_form(texts[offset + i]) for i in pos.tolist()]
    offer_cut(cut_texts, ids, np.concatenate(occs))


# ------------------------------------------------------------------------------- the wire


def write_frame(out: IO[bytes], obj: object) -> None:
    """One length-prefixed pickle."""
    blob = pickle.dumps(obj, protocol=5)
    out.write(_HEADER.pack(len(blob)))
    out.write(blob)
    out.flush()


def frame_length(header: bytes) -> int:
    """The payload length a frame header announces; :class:`WorkerFailed` for a header that
    is short or announces more than :data:`_MAX_FRAME`."""
    if len(header) != _HEADER.size:
        raise WorkerFailed("the worker's stream ended inside a frame header")
    (size,) = _HEADER.unpack(header)
    if size > _MAX_FRAME:
        raise WorkerFailed(f"the worker announced a frame of {size} bytes")
    return int(size)


def _read_exact(fd: int, size: int, deadline: float) -> bytes:
    """``size`` bytes from pipe ``fd`` by ``deadline`` (``time.monotonic``)."""
    buf = bytearray()
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while len(buf) < size:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise WorkerFailed("the worker did not answer in time")
            chunk = os.read(fd, min(size - len(buf), 1 << 22))  # (never blocks: readable)
            if not chunk:
                raise WorkerFailed("the worker's stream ended")
            buf += chunk
    return bytes(buf)


class _Worker:
    """The parent's side of one worker process (one batch, then it exits)."""

    def __init__(self, proc: subprocess.Popen[bytes], request: bytes) -> None:
        self._proc = proc
        self._failure: BaseException | None = None
        # The texts are written by a thread: the worker reads them after its imports
        # (0.2-0.3 s), and this process counts its own half meanwhile.
        self._writer = threading.Thread(
            target=self._write, args=(request,), name="treehop-tagger-send", daemon=True
        )
        self._writer.start()

    @classmethod
    def start(cls, texts: list[str], bigrams: bool, keep_cut: bool) -> _Worker | None:
        """A worker counting ``texts``, or None when none can start here."""
        try:
            request = pickle.dumps(("count", texts, bigrams, keep_cut), protocol=5)
            proc = subprocess.Popen(
                worker_command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except (OSError, ValueError, pickle.PicklingError):
            return None
        return cls(proc, request)

    def _write(self, blob: bytes) -> None:
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            stdin.write(_HEADER.pack(len(blob)))
            stdin.write(blob)
            stdin.flush()
        except (OSError, ValueError) as exc:  # (the worker died, or was stopped)
            self._failure = exc

    def _reply(self, timeout_s: float) -> tuple[Any, ...]:
        deadline = time.monotonic() + timeout_s
        self._writer.join(max(deadline - time.monotonic(), 0.0))
        if self._writer.is_alive() or self._failure is not None:
            raise WorkerFailed("the worker did not take its texts")
        stdout = self._proc.stdout
        assert stdout is not None
        try:
            fd = stdout.fileno()
            size = frame_length(_read_exact(fd, _HEADER.size, deadline))
            reply = pickle.loads(_read_exact(fd, size, deadline))
        except (OSError, ValueError, pickle.UnpicklingError, EOFError) as exc:
            # (a pipe that cannot be waited on, as on Windows, is a failure like any other)
            raise WorkerFailed(f"no readable answer: {exc}") from None
        except (AttributeError, ImportError, IndexError, TypeError) as exc:
            raise WorkerFailed(f"unreadable answer: {exc}") from None
        if not isinstance(reply, tuple) or not reply or reply[0] == "error":
            raise WorkerFailed(f"the worker failed: {reply!r:.200}")
        return reply

    def counts(self, timeout_s: float, n_docs: int) -> _BatchCounts:
        """The worker's sub-batch of ``n_docs`` documents: atoms, keys, frequencies, cut
        (its counts stay there)."""
        reply = self._reply(timeout_s)
        try:
            tag, got_docs, strs, keys, df, cut = reply
            atoms = _Atoms.spelled(list(strs))
            keys, df = np.asarray(keys, np.int64), np.asarray(df, np.int64)
        except (TypeError, ValueError) as exc:
            raise WorkerFailed(f"malformed counts: {exc}") from None
        if tag != "counts" or got_docs != n_docs or keys.shape != df.shape or keys.ndim != 1:
            raise WorkerFailed("malformed counts")
        return _BatchCounts(n_docs, atoms, keys, df, [], [], cut)

    def send_scores(self, params: dict[str, Any], n_docs: int, df: NDArray[np.int64]) -> None:
        """Send the merged frequencies of the worker's terms (it scores its documents)."""
        stdin = self._proc.stdin
        assert stdin is not None
        try:
            write_frame(stdin, ("score", params, n_docs, df))
        except (OSError, ValueError) as exc:
            raise WorkerFailed(f"the worker stopped: {exc}") from None

    def tags(self, timeout_s: float, n_docs: int) -> list[list[str]]:
        """The tags of the worker's ``n_docs`` documents."""
        reply = self._reply(timeout_s)
        if reply[0] != "tags" or len(reply) != 2 or not isinstance(reply[1], list):
            raise WorkerFailed("malformed tags")
        if len(reply[1]) != n_docs:
            raise WorkerFailed(f"tags for {len(reply[1])} documents, not {n_docs}")
        return reply[1]

    def close(self) -> None:
        """Stop the worker: it exits on its own after its tags, or at the end of its input;
        one that has not taken its texts (hung, or stopped) is killed first, which also
        ends this side's write of them. Killed if it has not exited within a second."""
        proc = self._proc
        if self._writer.is_alive():
            proc.kill()
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):  # (a broken pipe: the worker is gone)
                    stream.close()
        try:
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        self._writer.join()


_BOOT: Final = (
    "import sys, types; r = sys.argv[1]\n"
    "for name in ('treehop', 'treehop.tagging'):\n"
    "    m = sys.modules[name] = types.ModuleType(name)\n"
    "    m.__path__ = [r + '/' + name.replace('.', '/')]\n"
    "from treehop.tagging.second_process import main; main()"
)
"""The worker's program. The modules come from the directory this treehop was imported from
(so it runs this very code, installed or not, and nothing is put before the standard library
on its path); its two packages are entered without running their ``__init__``, which imports
the whole client (0.8 s of a start that takes 0.3 s without it)."""


def worker_command() -> list[str]:
    """The worker's command line: this interpreter, ``-P`` (the working directory is not on
    its path: a file there cannot shadow a module), :data:`_BOOT`.

    :class:`OSError` where this process was not started by a Python interpreter it can
    start again: a frozen application (its executable is the application) or an embedding
    host (uWSGI, a plugin) whose executable is not named ``python*``/``pypy*``."""
    exe = sys.executable
    name = Path(exe).name.lower() if exe else ""
    if getattr(sys, "frozen", False) or not name.startswith(("python", "pypy")):
        raise OSError(f"no Python interpreter to start a worker with ({exe!r})")
    return [exe, "-P", "-c", _BOOT, str(Path(__file__).resolve().parents[2])]


# ------------------------------------------------------------------------------ the worker


def _serve(inp: IO[bytes], out: IO[bytes]) -> None:
    """Count one sub-batch, send its vocabulary, score it with the frequencies sent back,
    send its tags."""
    header = inp.read(_HEADER.size)
    if not header:
        return
    req = pickle.loads(inp.read(frame_length(header)))
    _, texts, bigrams, keep_cut = req
    batch = _count_batch(texts, bigrams, keep_cut)
    write_frame(
        out,
        ("counts", batch.n_docs, batch.atoms.strs, batch.keys, batch.df, batch.cut),
    )
    header = inp.read(_HEADER.size)
    if not header:
        return  # (the parent did the scoring itself)
    _, params, n_docs, df = pickle.loads(inp.read(frame_length(header)))
    scorer = KeywordTagger._batch_scorer(params, n_docs, batch, df)
    write_frame(out, ("tags", scorer._batch_tags(batch)))


def main() -> None:
    """The worker's entry point (see :func:`worker_command`)."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # (stray prints go to stderr, never into the frames)
    try:
        _serve(sys.stdin.buffer, out)
    except BaseException as exc:  # (reported to the parent, which does the part itself)
        with contextlib.suppress(OSError):
            write_frame(out, ("error", f"{type(exc).__name__}: {exc}"))
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
