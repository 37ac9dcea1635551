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

__all__ = ["PreparedFit", "fit_extract", "split_point"]

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
    fit = PreparedFit.count(tagger.params(), fit_texts, texts)
    try:
        fit.merge(tagger)
        return fit.labels(tagger)
    finally:
        fit.close()


def _split_fit_extract(
    tagger: KeywordTagger, texts: list[str], at: int, keep_cut: bool, worker: _Worker | None
) -> list[list[str]]:
    """The three steps of the module docstring, cut at ``at``; each of the worker's is done
    here instead when it fails (``worker`` None: all of them)."""
    fit = PreparedFit._split(tagger.params(), texts, at, keep_cut, worker)
    try:
        fit.merge(tagger)
        return fit.labels(tagger)
    finally:
        fit.close()


class PreparedFit:
    """:func:`fit_extract` in three steps, so that only the middle one touches the
    statistics: :meth:`count` analyses and counts the texts on their own (the long part:
    seconds for a large ingest), :meth:`merge` adds the counts into a tagger's statistics
    (numbering and one addition), :meth:`labels` scores the documents with the merged
    frequencies it took.

    Why: the index's statistics lock (``locks/tagger``) is held from their read to their
    save; held through the counting and scoring of a large ingest, it made another
    process's tagging wait, then fail with ``IndexLockedError`` after ``lock_timeout``
    (helper races58, "Left"; helper leftovers56). The caller holds it around :meth:`merge`
    only. The frequencies, the saved statistics and the tags equal ``fit_extract``'s
    (``tests/test_tagging_second_process.py``, ``tests/test_leftovers56.py``).

    :meth:`count` needs the analysis parameters only (``bigrams``, ``method``); a tagger
    whose parameters differ from those counted with (:meth:`fits`: the stored statistics
    were written with other ones) gets ``partial_fit_extract`` instead, whole."""

    def __init__(
        self,
        params: dict[str, Any],
        fit_texts: Sequence[str],
        texts: Sequence[str],
        batches: list[_BatchCounts] | None,
        at: int | None,
        keep_cut: bool,
        worker: _Worker | None,
    ) -> None:
        self._params = params
        self._fit_texts = fit_texts
        self._texts = texts
        self._batches = batches
        """The counted sub-batches (None: counted at :meth:`merge`, the whole way)."""
        self._at = at
        self._keep_cut = keep_cut
        self._worker = worker
        self._scored: tuple[dict[str, Any], int, list[NDArray[np.int64]]] | None = None
        self._whole: list[list[str]] | None = None

    @classmethod
    def count(
        cls, params: dict[str, Any], fit_texts: Sequence[str], texts: Sequence[str]
    ) -> PreparedFit:
        """Analyse and count ``fit_texts`` for a tagger of ``params`` (no tagger touched).
        Texts a fit would refuse are left for :meth:`merge`, which raises its
        :class:`~treehop.tagging.keywords.TaggerError`."""
        bigrams = bool(params.get("bigrams", True))
        if (
            isinstance(texts, str)
            or isinstance(fit_texts, str)
            or not all(isinstance(t, str) for t in fit_texts)
        ):
            return cls(params, fit_texts, texts, None, None, False, None)
        same = params.get("method") == "tfidf" and list(fit_texts) == list(texts)
        at = None
        if same and _cores() >= 2:
            at = split_point(texts)
        if at is None:
            if not same and params.get("method") == "tfidf" and not fit_texts:
                return cls(params, fit_texts, texts, None, None, False, None)
            return cls(
                params,
                fit_texts,
                texts,
                [_count_batch(fit_texts, bigrams, False)],
                None,
                False,
                None,
            )
        texts = list(texts)
        keep_cut = wants_cut(len(texts))
        return cls._split(params, texts, at, keep_cut, _Worker.start(texts[at:], bigrams, keep_cut))

    @classmethod
    def _split(
        cls,
        params: dict[str, Any],
        texts: list[str],
        at: int,
        keep_cut: bool,
        worker: _Worker | None,
    ) -> PreparedFit:
        """Steps 1-2 of the module docstring's counting: ``texts[:at]`` here while
        ``worker`` (None: this process) counts the rest."""
        bigrams = bool(params.get("bigrams", True))
        try:
            t0 = time.monotonic()
            first = _count_batch(texts[:at], bigrams, keep_cut)
            second: _BatchCounts | None = None
            if worker is not None:
                try:
                    second = worker.counts(_wait_s(time.monotonic() - t0), len(texts) - at)
                except WorkerFailed:
                    worker.close()
                    worker = None
            if second is None:
                second = _count_batch(texts[at:], bigrams, keep_cut)
        except BaseException:
            if worker is not None:
                worker.close()
            raise
        return cls(params, texts, texts, [first, second], at, keep_cut, worker)

    def fits(self, tagger: KeywordTagger) -> bool:
        """Whether ``tagger`` analyses as the counts were made."""
        mine = self._params
        return tagger.bigrams == mine.get("bigrams") and tagger.method == mine.get("method")

    def merge(self, tagger: KeywordTagger) -> None:
        """Add the counted texts to ``tagger``'s statistics (the short step, under the
        caller's lock); a tagger of other parameters fits and extracts here, whole."""
        if self._batches is None or not self.fits(tagger):
            self.close()
            self._whole = tagger.partial_fit_extract(self._fit_texts, self._texts)
            return
        gids = [tagger._number_batch(b) for b in self._batches]
        tagger._fit_batches(self._batches, gids)
        # (copies: the tagger may count more before :meth:`labels` runs)
        self._scored = (tagger.params(), tagger.n_docs, [tagger._df[g] for g in gids])

    def labels(self, tagger: KeywordTagger) -> list[list[str]]:
        """Each text's labels, with the frequencies :meth:`merge` left (``tagger``: the
        one merged into, for a batch that is not its fitted texts)."""
        if self._whole is not None:
            return self._whole
        assert self._batches is not None and self._scored is not None
        params, n_docs, dfs = self._scored
        if len(self._batches) == 1 and self._at is None:
            if params.get("method") != "tfidf" or list(self._fit_texts) != list(self._texts):
                return tagger.extract_many(self._texts)
            (batch,) = self._batches
            return KeywordTagger._batch_scorer(params, n_docs, batch, dfs[0])._batch_tags(batch)
        return self._split_labels(params, n_docs, dfs)

    def _split_labels(
        self, params: dict[str, Any], n_docs: int, dfs: list[NDArray[np.int64]]
    ) -> list[list[str]]:
        """Step 3 of the module docstring: each sub-batch scored where it was counted (the
        worker's here instead when it fails)."""
        assert self._batches is not None and self._at is not None
        first, second = self._batches
        texts, at, worker = list(self._texts), self._at, self._worker
        if worker is not None:
            try:
                worker.send_scores(params, n_docs, dfs[1])
            except WorkerFailed:
                worker = None
        t0 = time.monotonic()
        scorer = KeywordTagger._batch_scorer(params, n_docs, first, dfs[0])
        labels = scorer._batch_tags(first)
        tags_second: list[list[str]] | None = None
        if worker is not None:
            with contextlib.suppress(WorkerFailed):
                tags_second = worker.tags(_wait_s(time.monotonic() - t0), second.n_docs)
        if tags_second is None:
            if not second.counted:  # (its counts were the worker's: counted again, alike)
                second = replace(
                    _count_batch(texts[at:], bool(params["bigrams"]), False), cut=second.cut
                )
            scorer = KeywordTagger._batch_scorer(params, n_docs, second, dfs[1])
            tags_second = scorer._batch_tags(second)
        cuts = [(offset, b.cut) for offset, b in ((0, first), (at, second)) if b.cut is not None]
        if self._keep_cut and cuts:
            _offer_merged_cut(texts, cuts)
        return labels + tags_second

    def close(self) -> None:
        """Stop the worker, if one is still running."""
        if self._worker is not None:
            self._worker.close()
            self._worker = None


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
