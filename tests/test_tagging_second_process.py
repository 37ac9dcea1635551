"""A large batch of the keyword tagger on two cores (``tagging/second_process.py``): the same
frequencies, tags, saved delta and BM25 cut as one process, whoever counted the second
sub-batch; every way the worker can fail ends in those same results.

The split is measured by ``bench/bench_ingest.py --part nodes --stages``; these tests make
it happen on small batches by lowering the thresholds (the worker analyses its texts with
its own part size: parts never change results)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_tagging_parts import _TEXT
from treehop import Treehop, text_tokenize
from treehop.stores.embedded import EmbeddedStore
from treehop.tagging import keywords, second_process
from treehop.tagging.keywords import KeywordTagger

from treehop_test_doubles import BagOfWordsEmbedder


@pytest.fixture(autouse=True)
def _small_batches_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of a few hundred characters split, in parts of ~300 (on any machine: the
    split wants two cores, which a CI runner may not offer)."""
    monkeypatch.setattr(second_process, "SPLIT_MIN_CHARS", 1)
    monkeypatch.setattr(keywords, "_PART_CHARS", 300)
    monkeypatch.setattr(second_process, "_cores", lambda: 2)


def _corpus(n: int, seed: int = 5) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [f"{a}{b}{c}" for a in "bdkmst" for b in ("al", "en", "or") for c in "nrsy"]
    extra = ["feature-store", "data-lake", "k8s", "café", "don\u2019t", "机器学习", "\n\n"]
    return [
        ". ".join(" ".join(rng.choice(words + extra, size=7).tolist()) for _ in range(3))
        for _ in range(n)
    ]


def _seen(
    tagger: KeywordTagger, cut: text_tokenize.ChunkCut | None, texts: Sequence[str] = ()
) -> tuple[object, ...]:
    """What a fit shows: corpus size, vocabulary size, every term's frequency (by string:
    new terms may be numbered in another order), and the offered cut of ``texts``."""
    terms = sorted(tagger._vocab.strings(list(range(tagger.vocabulary_size))))
    return (
        tagger.n_docs,
        tagger.vocabulary_size,
        terms,
        tagger.document_frequencies(terms).tolist(),
        None
        if cut is None
        else ([_text_key(t, texts) for t in cut.texts], cut.chunks, cut.occ.tolist()),
    )


def _text_key(text: str, texts: Sequence[str]) -> object:
    """A cut text as the BM25 index finds it: one of the caller's by identity, a
    normalised one by value (a new string each time, which it never finds)."""
    mine = [i for i, t in enumerate(texts) if t is text]
    return ("the caller's", mine[0]) if mine else ("normalised", text)


def _fit(texts: list[str], split: bool) -> tuple[list[list[str]], tuple[object, ...]]:
    if split:
        return _run_fit(texts, lambda t: second_process.fit_extract(t, texts, texts))
    return _run_fit(texts, lambda t: t.partial_fit_extract(texts, texts))


def _run_fit(
    texts: list[str], run: Callable[[KeywordTagger], list[list[str]]]
) -> tuple[list[list[str]], tuple[object, ...]]:
    """``run`` on a fresh tagger inside an ingest's cut-sharing scope: its tags and
    :func:`_seen`."""
    tagger = KeywordTagger(min_df=1, max_df_ratio=0.9)
    with text_tokenize.sharing_cuts():
        labels = run(tagger)
        share = text_tokenize._SHARE.get()
        assert share is not None
        return labels, _seen(tagger, share.cut, texts)


@contextmanager
def _recorded() -> Iterator[dict[str, int]]:
    """Counts the worker's answers that were used (a test of the worker's path fails if the
    split quietly did everything in this process)."""
    used = {"counts": 0, "tags": 0, "started": 0}
    real_counts, real_tags = second_process._Worker.counts, second_process._Worker.tags
    real_start = second_process._Worker.start.__func__  # type: ignore[attr-defined]

    def counts(self: second_process._Worker, *a: object) -> object:
        out = real_counts(self, *a)  # type: ignore[arg-type]
        used["counts"] += 1
        return out

    def tags(self: second_process._Worker, *a: object) -> object:
        out = real_tags(self, *a)  # type: ignore[arg-type]
        used["tags"] += 1
        return out

    def start(cls: type, *a: object) -> object:
        out = real_start(cls, *a)
        used["started"] += out is not None
        return out

    mp = pytest.MonkeyPatch()
    mp.setattr(second_process._Worker, "counts", counts)
    mp.setattr(second_process._Worker, "tags", tags)
    mp.setattr(second_process._Worker, "start", classmethod(start))
    try:
        yield used
    finally:
        mp.undo()


def _in_process_split(texts: list[str], at: int) -> tuple[list[list[str]], tuple[object, ...]]:
    """The split done wholly in this process (the path of a worker that never started)."""
    return _run_fit(
        texts,
        lambda t: second_process._split_fit_extract(
            t, texts, at, text_tokenize.wants_cut(len(texts)), None
        ),
    )


@settings(max_examples=120, deadline=None)
@given(st.lists(_TEXT, min_size=2, max_size=12), st.data())
def test_two_sub_batches_fit_and_tag_as_one_batch(texts: list[str], data: st.DataObject) -> None:
    """At any split point: the tags, every term's frequency, the corpus and vocabulary sizes
    and the BM25 cut (the same text objects, chunks and numbering) of one batch."""
    at = data.draw(st.integers(1, len(texts) - 1))
    assert _in_process_split(texts, at) == _fit(texts, split=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(_TEXT, min_size=2, max_size=10), st.lists(_TEXT, max_size=4), st.data())
def test_a_split_fit_saves_a_delta_that_rebuilds_it(
    texts: list[str], later: list[str], data: st.DataObject
) -> None:
    """On a tagger loaded from a saved base, a split fit records what it counted: the delta
    applied to that base gives its frequencies (what an ingest saves)."""
    base = KeywordTagger(min_df=1)
    base.partial_fit(later)
    raw = base.full_state()
    tagger = KeywordTagger.from_bytes(raw)
    tagger._base_id = "fixed"
    at = data.draw(st.integers(1, len(texts) - 1))
    second_process._split_fit_extract(tagger, texts, at, False, None)
    rebuilt = KeywordTagger.from_bytes(raw)
    rebuilt._base_id = "fixed"
    delta = tagger.state_delta(max_share=1.0)
    assert delta is not None
    assert rebuilt.apply_delta(delta)
    assert _seen(rebuilt, None) == _seen(tagger, None)


def test_split_point_is_a_part_boundary_near_the_workers_share(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = _corpus(400)
    at = second_process.split_point(texts)
    bounds = keywords._part_bounds(texts, keywords._PART_CHARS)
    assert at in bounds[1:-1]
    chars = np.cumsum([len(t) for t in texts])
    share = 1.0 - chars[at - 1] / chars[-1]
    assert abs(share - second_process.WORKER_SHARE) < 0.05
    assert second_process.split_point(list(texts)) == at  # (the texts alone decide)
    monkeypatch.setattr(second_process, "SPLIT_MIN_CHARS", int(chars[-1]) + 1)
    assert second_process.split_point(texts) is None
    monkeypatch.setattr(keywords, "_PART_CHARS", 1 << 30)
    monkeypatch.setattr(second_process, "SPLIT_MIN_CHARS", 1)
    assert second_process.split_point(texts) is None  # one part: nothing to split


def test_the_worker_counts_and_tags_its_sub_batch() -> None:
    texts = _corpus(400)
    want = _fit(texts, split=False)
    with _recorded() as used:
        got = _fit(texts, split=True)
    assert used == {"started": 1, "counts": 1, "tags": 1}
    assert got == want
    assert any(got[0])


def test_no_worker_without_a_second_core_or_for_textrank(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _corpus(200)
    monkeypatch.setattr(second_process, "_cores", lambda: 1)
    with _recorded() as used:
        assert _fit(texts, split=True) == _fit(texts, split=False)
    monkeypatch.setattr(second_process, "_cores", lambda: 2)
    with _recorded() as used_tr:
        t = KeywordTagger(method="textrank", min_df=1)
        assert second_process.fit_extract(t, texts, texts) == KeywordTagger(
            method="textrank", min_df=1
        ).partial_fit_extract(texts, texts)
    assert used["started"] == used_tr["started"] == 0


def test_bad_input_gets_the_taggers_error_and_starts_nothing() -> None:
    with _recorded() as used:
        with pytest.raises(keywords.TaggerError):
            second_process.fit_extract(KeywordTagger(), ["ok text", 3], ["ok text", 3])  # type: ignore[list-item]
        with pytest.raises(keywords.TaggerError):
            second_process.fit_extract(KeywordTagger(), "one string", "one string")
    assert used["started"] == 0


_CRASH_AFTER_COUNTS = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from treehop.tagging import second_process as sp; "
    "sp.KeywordTagger._batch_scorer = None; sp.main()"
)
_WRONG_TAGS = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from treehop.tagging import second_process as sp; "
    "sp.KeywordTagger._batch_tags = lambda self, b: [['x']]; sp.main()"
)
_FAIL_COUNTING = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from treehop.tagging import second_process as sp; "
    "sp._count_batch = None; sp.main()"
)
_ROOT = str(Path(second_process.__file__).resolve().parents[2])


@pytest.mark.parametrize(
    "command",
    [
        pytest.param([os.path.join(_ROOT, "no-such-python")], id="cannot-start"),
        pytest.param([sys.executable, "-c", "import sys; sys.exit(3)"], id="exits-at-once"),
        pytest.param(
            [sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'\\xff' * 8)"],
            id="announces-a-huge-frame",
        ),
        pytest.param(
            [sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'\\x04' + b'\\0' * 7)"],
            id="ends-inside-a-frame",
        ),
        pytest.param(
            [
                sys.executable,
                "-c",
                "import sys, struct; sys.stdin.buffer.read(1); "
                "sys.stdout.buffer.write(struct.pack('<Q', 4) + b'junk')",
            ],
            id="unreadable-pickle",
        ),
        pytest.param([sys.executable, "-c", _FAIL_COUNTING, _ROOT], id="error-while-counting"),
        pytest.param([sys.executable, "-c", _CRASH_AFTER_COUNTS, _ROOT], id="error-while-scoring"),
        pytest.param([sys.executable, "-c", _WRONG_TAGS, _ROOT], id="tags-for-too-few-documents"),
    ],
)
def test_a_failing_worker_costs_time_never_a_result(
    monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    """This process does the worker's part itself; the results are one process's."""
    texts = _corpus(300)
    want = _fit(texts, split=False)
    monkeypatch.setattr(second_process, "worker_command", lambda: command)
    with _recorded() as used:
        assert _fit(texts, split=True) == want
    assert used["tags"] == 0
    if "no-such-python" not in command[0]:
        assert used["started"] == 1


def test_a_silent_worker_is_stopped_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that never reads nor answers is waited for until :func:`_wait_s`, then
    killed (which also ends the write of its texts, more than a pipe holds); this process
    counts its part."""
    texts = _corpus(3000)
    want = _fit(texts, split=False)
    monkeypatch.setattr(
        second_process,
        "worker_command",
        lambda: [sys.executable, "-c", "import time; time.sleep(30)"],
    )
    monkeypatch.setattr(second_process, "WAIT_FLOOR_S", 0.5)
    monkeypatch.setattr(second_process, "WAIT_FACTOR", 0.0)
    workers: list[second_process._Worker] = []
    real_init = second_process._Worker.__init__

    def init(self: second_process._Worker, proc: subprocess.Popen[bytes], request: bytes) -> None:
        workers.append(self)
        real_init(self, proc, request)
        assert len(request) > 1 << 17  # (more than a pipe's buffer: the write blocks)

    monkeypatch.setattr(second_process._Worker, "__init__", init)
    assert _fit(texts, split=True) == want
    (worker,) = workers
    assert worker._proc.returncode == -9  # (killed, not left running nor waited out)
    assert not worker._writer.is_alive()


@pytest.mark.parametrize(
    ("frozen", "executable"),
    [(True, sys.executable), (False, "/usr/bin/uwsgi"), (False, "")],
)
def test_no_worker_where_this_is_not_a_python_to_start_again(
    monkeypatch: pytest.MonkeyPatch, frozen: bool, executable: str
) -> None:
    """A frozen application or an embedding host would start itself: nothing is started."""
    texts = _corpus(200)
    want = _fit(texts, split=False)
    monkeypatch.setattr(sys, "frozen", frozen, raising=False)
    monkeypatch.setattr(sys, "executable", executable)
    with pytest.raises(OSError):
        second_process.worker_command()
    with _recorded() as used:
        assert _fit(texts, split=True) == want
    assert used["started"] == 0


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=12))
def test_a_frame_header_is_a_length_within_bounds_or_a_failure(header: bytes) -> None:
    try:
        size = second_process.frame_length(header)
    except second_process.WorkerFailed:
        assert len(header) != 8 or int.from_bytes(header, "little") > second_process._MAX_FRAME
    else:
        assert len(header) == 8 and size == int.from_bytes(header, "little")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text(max_size=40), max_size=30))
def test_frames_cross_a_pipe_whole(obj: list[str]) -> None:
    r, w = os.pipe()
    with os.fdopen(w, "wb") as out:
        second_process.write_frame(out, ("x", obj))
    deadline = time.monotonic() + 30.0
    try:
        size = second_process.frame_length(second_process._read_exact(r, 8, deadline))
        assert pickle.loads(second_process._read_exact(r, size, deadline)) == ("x", obj)
        with pytest.raises(second_process.WorkerFailed):
            second_process._read_exact(r, 1, deadline)  # (the stream ended)
    finally:
        os.close(r)


def _tree(root: Path, n: int) -> Path:
    texts = _corpus(n, seed=9)
    for i, text in enumerate(texts):
        d = root / f"area-{i % 4}" / f"topic-{i % 7}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"note-{i}.md").write_text(f"# Note {i}\n\n{text}\n", encoding="utf-8")
    return root


def test_an_ingest_with_the_worker_stores_what_one_process_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut_reuse: list[bool]
) -> None:
    """Every node's tags and the BM25 index of an ingest whose tagger split its batch (the
    worker used, its cut merged and reused by BM25) equal an ingest's that did not."""
    src = _tree(tmp_path / "src", 240)

    def ingest(split: bool) -> EmbeddedStore:
        monkeypatch.setattr(second_process, "SPLIT_MIN_CHARS", 1 if split else 1 << 40)
        store = EmbeddedStore(None, ann_min_rows=None)
        with Treehop(embedder=BagOfWordsEmbedder(), tagger="auto", store=store) as th:
            th.add_resource(src, target_uri="viking://resources/notes")
        return store

    with _recorded() as used:
        split = ingest(True)
    assert used["tags"] == 1 and cut_reuse and all(cut_reuse)
    plain = ingest(False)
    tags = {n.uri: n.tags for n in split.iter_nodes()}
    assert tags == {n.uri: n.tags for n in plain.iter_nodes()}
    assert any(t for t in tags.values())
    a, b = split.lexical, plain.lexical
    assert a is not None and b is not None
    for query in ("feature-store kalr", "data-lake torn", "cafe benr"):
        assert np.array_equal(a.score(query, size=400), b.score(query, size=400))
