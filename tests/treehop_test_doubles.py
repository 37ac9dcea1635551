"""Test doubles shared by the test suites (a uniquely named module, importable from any
test directory: ``from treehop_test_doubles import BagOfWordsEmbedder``)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st

from treehop import Treehop
from treehop.descent import Candidate, Score
from treehop.embedders.base import BaseEmbedder, normalize_rows
from treehop.models import ContextType, FoundBy, MatchedContext, Node
from treehop.stores.embedded import EmbeddedStore
from treehop.uri import ancestors_of, parent_of

SAMPLE_TREE = Path(__file__).resolve().parents[1] / "retrieval" / "treehop" / "sample_tree"
_WORD = re.compile(r"[\w-]+")


class BagOfWordsEmbedder(BaseEmbedder):
    name = "test-bag-of-words-64"
    dimension = 64

    def __init__(self) -> None:
        self.calls = 0
        self.texts_embedded = 0

    def _word_vec(self, word: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.md5(word.encode()).digest()[:4], "little")
        return np.random.default_rng(seed).standard_normal(self.dimension)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self.dimension))
        for i, t in enumerate(texts):
            for w in _WORD.findall(t.lower()):
                out[i] += self._word_vec(w)
        return normalize_rows(out, len(texts), self.dimension)


def assert_one_vector_space(tmp_path: Path, embedder: BaseEmbedder, wrapped: BaseEmbedder) -> None:
    """``wrapped`` (a framework's wrapper around ``embedder``: LangChain's
    ``LangChainEmbedder(TreehopEmbeddings(e))``, LlamaIndex's
    ``LlamaIndexEmbedder(TreehopEmbedding(e))``) is ``embedder``'s vector space: an index
    either builds opens with the other, finding the same. One copy for both integrations'
    tests, so that both are held to the same check."""
    assert wrapped.name == embedder.name
    with Treehop(path=tmp_path / "a", embedder=wrapped, tagger=None) as c:
        c.add_resource("Backups run nightly.", name="ops")
        before = [(m.uri, m.score) for m in c.find("backups").contexts()]
    with Treehop(path=tmp_path / "a", embedder=embedder, tagger=None) as c:
        assert [(m.uri, m.score) for m in c.find("backups").contexts()] == before
    with Treehop(path=tmp_path / "b", embedder=embedder, tagger=None) as c:
        c.add_resource("Backups run nightly.", name="ops")
    with Treehop(path=tmp_path / "b", embedder=wrapped, tagger=None) as c:
        assert [m.uri for m in c.find("backups").contexts()] == ["viking://resources/ops"]


HAND_ROOT = "viking://resources"
HAND_DIM = 8


def hand_vector(*pairs: tuple[int, float]) -> np.ndarray:
    """A unit vector of :data:`HAND_DIM` dimensions from ``(axis, value)`` pairs: trees with
    hand-placed vectors make each score of a retrieval test readable."""
    v = np.zeros(HAND_DIM, np.float32)
    for i, x in pairs:
        v[i] = x
    return v / np.linalg.norm(v)


def hand_placed_store(spec: dict[str, tuple[np.ndarray, list[str]]]) -> EmbeddedStore:
    """An :class:`EmbeddedStore` of resources under :data:`HAND_ROOT`. ``spec``: uri ->
    (vector, tags); URIs ending in .md are leaves."""
    store = EmbeddedStore()
    nodes, vecs = [], []
    for uri, (v, tags) in spec.items():
        leaf = uri.endswith(".md")
        nodes.append(
            Node(
                uri=uri,
                parent_uri=parent_of(uri),
                context_type=ContextType.RESOURCE,
                level=2 if leaf else (0 if uri == HAND_ROOT else 1),
                is_leaf=leaf,
                abstract=uri.rsplit("/", 1)[-1],
                content=uri if leaf else "",
                tags=tags,
                ancestors=ancestors_of(uri),
            )
        )
        vecs.append(v)
    store.upsert(nodes, np.stack(vecs))
    return store


def store_leaf(uri: str, text: str = "", **metadata: Any) -> Node:
    """A resource leaf for store tests: tagged ``auto:alpha``, text ``text of <uri>`` unless
    given, ``metadata`` as keyword arguments."""
    return Node(
        uri=uri,
        parent_uri=uri.rsplit("/", 1)[0],
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        abstract=uri.rsplit("/", 1)[-1],
        content=text or f"text of {uri}",
        tags=["auto:alpha"],
        metadata=dict(metadata),
    )


def chunk_candidate(
    doc: str,
    i: int,
    own: float,
    final: float | None = None,
    *,
    content: str | None = None,
    **metadata: Any,
) -> Candidate:
    """Chunk ``i`` of the file ``doc`` as the descent collects it (found by the global
    step): its own score ``own``, the score it ranks on ``final`` (``own`` by default), its
    text ``content`` (``"text of chunk i"`` by default) and chunk ``metadata``
    (``heading_path``, ``passage_start``)."""
    node = Node(
        uri=f"{doc}#chunk-{i}",
        parent_uri=doc,
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        content=f"text of chunk {i}" if content is None else content,
        chunk_index=i,
        metadata=metadata,
    )
    top = own if final is None else final
    return Candidate(node, Score(own), Score(top), own, FoundBy.GLOBAL)


def leaf_hit(uri: str, content: str, score: float, **fields: Any) -> MatchedContext:
    """A leaf resource hit as ``find()`` returns it: ``uri``, its text ``content`` and
    ``score``, with any other :class:`MatchedContext` ``fields`` (``own_score``,
    ``parent_uri``, ``chunk_index``, ``abstract``: empty unless given)."""
    fields.setdefault("abstract", "")
    return MatchedContext(
        uri=uri,
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        score=score,
        content=content,
        **fields,
    )


def store_folder(uri: str, parent: str) -> Node:
    """A resource directory for store tests, under ``parent``, its name as its abstract."""
    return Node(
        uri=uri,
        parent_uri=parent,
        context_type=ContextType.RESOURCE,
        level=1,
        is_leaf=False,
        abstract=uri.rsplit("/", 1)[-1],
    )


def unit_vectors(n: int, seed: int = 0, dim: int = HAND_DIM) -> np.ndarray:
    """``n`` random unit vectors (seeded)."""
    v = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    out: np.ndarray = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


ZEBRA_URI = "viking://resources/zebra.md"


def zebra_write() -> tuple[Node, np.ndarray]:
    """A leaf no saved test index holds, and its bag-of-words vector: the unsaved write the
    reader-process tests make through the store's own API (a client's writes commit), which
    worker processes would not see."""
    node = Node(
        uri=ZEBRA_URI,
        parent_uri="viking://resources",
        context_type=ContextType.RESOURCE,
        level=1,
        is_leaf=True,
        content="Zebra crossings: striped zebra crossings for pedestrians.",
    )
    return node, BagOfWordsEmbedder().embed(["zebra crossings for pedestrians"])


def saved_sample_index(path: Path) -> Path:
    """The sample tree's security and devops resources indexed with
    :class:`BagOfWordsEmbedder` and saved at ``path`` (the reader-process tests' index: a
    worker opens what is saved)."""
    from treehop import Treehop

    with Treehop(path, embedder=BagOfWordsEmbedder()) as th:
        for part in ("security", "devops"):
            th.add_resource(SAMPLE_TREE / "resources" / part, target_uri="viking://resources")
        th.save()
    return path


def resource_root() -> Node:
    """The resources root directory (``viking://resources``), no text of its own."""
    return Node(
        uri="viking://resources",
        parent_uri=None,
        context_type=ContextType.RESOURCE,
        level=0,
        is_leaf=False,
    )


def resource_folder(uri: str, abstract: str | None = None, level: int = 1) -> Node:
    """A resource directory at ``uri`` under its URI's parent; its abstract its name unless
    given."""
    return Node(
        uri=uri,
        parent_uri=uri.rsplit("/", 1)[0],
        context_type=ContextType.RESOURCE,
        level=level,
        is_leaf=False,
        abstract=uri.rsplit("/", 1)[-1] if abstract is None else abstract,
    )


def resource_leaf(uri: str, text: str) -> Node:
    """A resource leaf (level 2) at ``uri`` under its URI's parent, ``text`` its content; no
    tags, no abstract (unlike :func:`store_leaf`)."""
    return Node(
        uri=uri,
        parent_uri=uri.rsplit("/", 1)[0],
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        content=text,
    )


def clustered_tree(
    n_dirs: int, per_dir: int, dim: int = 32, seed: int = 0
) -> tuple[list[Node], np.ndarray]:
    """Directories ``viking://resources/d<d>`` of leaves ``f<i>.md`` (text ``doc <d> <i>``)
    whose unit vectors cluster around their directory's (as a real tree's do): each
    directory's node, then its leaves, in order, with their vectors."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((n_dirs, dim)).astype(np.float32)
    nodes: list[Node] = []
    vecs: list[np.ndarray] = []
    for d in range(n_dirs):
        nodes.append(
            Node(
                uri=f"viking://resources/d{d}",
                parent_uri="viking://resources",
                context_type=ContextType.RESOURCE,
                level=1,
                is_leaf=False,
            )
        )
        vecs.append(centres[d])
        for i in range(per_dir):
            nodes.append(resource_leaf(f"viking://resources/d{d}/f{i}.md", f"doc {d} {i}"))
            vecs.append(centres[d] + 0.5 * rng.standard_normal(dim).astype(np.float32))
    m = np.stack(vecs)
    return nodes, m / np.linalg.norm(m, axis=1, keepdims=True)


def saved_graph_index(
    idx: Path, n_dirs: int = 20, per_dir: int = 150, dim: int = 384
) -> tuple[list[Node], np.ndarray]:
    """Save a :func:`clustered_tree` at ``idx`` with its HNSW graph built to the end and
    written (``ann-*.bin``), closed; its nodes and vectors (the graph-file tests' index)."""
    nodes, v = clustered_tree(n_dirs, per_dir, dim)
    s = EmbeddedStore(idx, ann_min_rows=0, lexical=False)
    s.upsert(nodes, v)
    s.save()
    assert s.wait_ann(timeout=3600)
    s.save()  # (the graph file written)
    s.close()
    return nodes, v


def run_script(template: str, index: Path, tmp_path: Path) -> list[str]:
    """Run ``template`` (formatted with ``paths``, this process's import path plus the tests
    folder, and ``index``) as a script of its own in a new interpreter under ``tmp_path``:
    it must exit 0 without a traceback; its output lines. (The reader-process tests' way to
    run code as ``__main__``, which a worker's spawn imports again.)"""
    import subprocess
    import sys

    paths = [p for p in sys.path if p] + [str(Path(__file__).parent)]
    script = tmp_path / "unguarded.py"
    script.write_text(template.format(paths=paths, index=str(index)))
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=240, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Traceback" not in out.stderr, out.stderr[-3000:]
    return out.stdout.splitlines()


def child_process(code: str, *args: str, timeout: float = 400) -> subprocess.CompletedProcess[str]:
    """Run ``code`` with ``args`` in a new interpreter that imports the ``treehop`` imported
    here and this folder's helpers: a crash there (SIGBUS under a map cut short) is a
    return code, not a dead test run (the mapped-file tests' one way to run a child)."""
    import treehop

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [
            str(Path(treehop.__file__).parents[1]),
            str(Path(__file__).resolve().parent),
            env.get("PYTHONPATH", ""),
        ]
    )
    env["OPENBLAS_NUM_THREADS"] = "1"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def redaction_in_a_new_process(obj: Any, key: str, tmp_path: Path) -> tuple[str, str]:
    """Pickle ``obj`` (an LLM or embedder holding ``key``) and unpickle it in a new
    interpreter, whose registry of secrets starts empty: ``redact("echo <key>")`` there
    before and after the unpickling. Only the code under test is on the child's path
    (``retrieval/`` of the ``treehop`` imported here). The pickle tests' one probe, so that
    each checks the same thing: unpickling registers the key again."""
    import pickle

    import treehop

    blob = tmp_path / "secret-holder.pickle"
    blob.write_bytes(pickle.dumps(obj))
    probe = (
        "import pickle, sys; from treehop.redaction import redact; "
        f"before = redact('echo {key}'); pickle.loads(open(sys.argv[1], 'rb').read()); "
        f"print(before, '|', redact('echo {key}'))"
    )
    retrieval = Path(treehop.__file__).resolve().parents[1]
    out = subprocess.run(
        [sys.executable, "-c", probe, str(blob)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(retrieval), "PATH": "/usr/bin:/bin"},
        check=True,
    ).stdout.strip()
    before, after = (s.strip() for s in out.split("|"))
    return before, after


SAMPLE_QUERIES = [
    "rotate the API keys",
    "deploy with docker compose",
    "incident response runbook",
    "encrypt data at rest",
    "roll back a release",
    "api keys",
    "docker",
    "release checklist",
    "encryption keys rotation",
    "incident postmortem",
    "compose services",
    "backup and restore",
    "access control",
    "monitoring alerts",
    "secrets in environment variables",
    "canary deploy",
    "audit logging",
    "tls certificates",
    "on-call escalation",
    "container images",
]
"""Queries over :func:`saved_sample_index`'s tree, for the batch tests (reader processes,
find_many): each file takes a prefix, so that the same words reach every batch path."""


ONE_BOOK_QUERY = "configure logging handler"
"""A topical query of :func:`one_long_book`'s words: over that one file it fills its limit
with passage slots."""


def one_long_book(root: Path) -> Path:
    """One long text file, ``root/book.txt``: 120 paragraphs over four topics, every one
    naming :data:`ONE_BOOK_QUERY`'s words (the one-file store of the framework wrappers'
    filled-slot tests)."""
    root.mkdir(parents=True, exist_ok=True)
    topics = ["logging", "fixtures", "markers", "plugins"]
    paras = [
        f"Paragraph {i}: configure {topics[i % 4]} handler level format number {i}. " * 4
        for i in range(120)
    ]
    book = root / "book.txt"
    book.write_text("\n\n".join(paras))
    return book


def add_records_one_by_one(client: Any, batch: Sequence[Any]) -> None:
    """``add_records``' write path before stop 54, verbatim: each whole record through
    ``add_resource`` (saved on its own), each shared source through ``awrite_file``. The
    reference its batch write must equal (``tests/test_records_atomic.py``) and the
    baseline ``bench/bench_add_records.py`` times."""
    from treehop import tags as tagmod
    from treehop.ingest.records import (
        Passage,
        PassageStore,
        _add_kwargs,
        plan_records,
        stable_id,
    )

    plan = plan_records(client, batch)

    async def write() -> None:
        aclient = client.aio
        groups: dict[str, list[Any]] = {}
        for p in plan:
            if p.chunk_of:
                groups.setdefault(p.target_uri, []).append(p)
        store = PassageStore(aclient, base_uri="viking://resources", path_key=None)
        for p in plan:
            if not p.chunk_of:
                kwargs = _add_kwargs(p)
                if p.source_path is not None:  # (stored by the batch since usage69)
                    kwargs["metadata"] = {"source_path": p.source_path, **(p.metadata or {})}
                await aclient.add_resource(p.text, **kwargs)
                continue
            group = groups.pop(p.target_uri, None)
            if group is None:
                continue
            # (each chunk with the source path it was placed by, its id made from the
            # metadata given: stored by the batch since leftovers62b)
            passages = [
                Passage(
                    g.text,
                    g.metadata
                    if g.source_path is None or "source_path" in g.metadata
                    else {**g.metadata, "source_path": g.source_path},
                    g.id if g.id is not None else stable_id(g.text, g.metadata),
                    offset=g.offset,
                )
                for g in group
            ]
            tags = tagmod.merge(*(g.tags for g in group))
            await store.awrite_file(p.target_uri, passages, tags=tags)

    client.run(write())


def settle_directory_tags(client: Any) -> None:
    """Re-tag every directory from the index as it ends up (``TreeWriter._tag_described``),
    where the writes did not re-tag the index whole (past ``retag_all_below``).

    Why: a write re-tags the directories it re-describes (helper leftovers56); one record at
    a time re-tagged a directory with the keyword statistics of its last record's write, a
    batch with those of the batch's end, and the tie-break by document frequency can differ.
    Settled, the two write paths must store the same bytes."""
    writer = client.aio.writer
    if writer.tagger is not None and len(client.store) > writer.retag_all_below:
        writer._tag_described([n for n in client.store.iter_nodes(None) if not n.is_leaf])


def raw_answer_server(raw: bytes) -> tuple[str, Any]:
    """A loopback server that answers every connection with the bytes ``raw`` (whatever was
    asked), for answers no HTTP server library would send: broken status lines, hostile
    encodings. Returns its URL and its socket (``close()`` it to stop the server)."""
    import contextlib
    import socket
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)

    def serve() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                with contextlib.suppress(OSError):  # (a client that hangs up mid-answer)
                    conn.sendall(raw)

    threading.Thread(target=serve, daemon=True).start()
    return f"http://127.0.0.1:{srv.getsockname()[1]}", srv


_PEAK_READOUT = """
with open("/proc/self/status") as _f:
    print(int([ln for ln in _f if ln.startswith("VmHWM:")][0].split()[1]) // 1024)
"""


def peak_memory_mb(probe: str) -> int:
    """Run ``probe`` (Python source) in a fresh interpreter that sees the tests folder and
    this process's ``sys.path`` (as ``sys.argv[2:]``: a probe starts with
    ``sys.path[:0] = sys.argv[2:]``) and answer its peak resident memory in MB.

    Why a fresh process: a bomb's cost must be measured on its own, not on top of the test
    runner's heap. Why ``VmHWM`` and not ``ru_maxrss``: on Linux ``ru_maxrss`` keeps the
    high-water mark of the process image before ``exec`` (the runner's, past 700 MB late in
    a full run), so a probe read that way failed in the full suite only."""
    here = str(Path(__file__).parent)
    done = subprocess.run(
        [sys.executable, "-c", probe + _PEAK_READOUT, "x", here, *sys.path],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.split()[-1])


KB_DOCS = {
    "ops/deploy.md": "# Deploy\n\nRoll back a deployment with kubectl rollout undo.\n",
    "sec/keys.md": "# Keys\n\nRotate API keys every 90 days; keys live in the vault.\n",
}
"""The two-page knowledge base :func:`indexed_kb` indexes unless told otherwise."""


@contextlib.contextmanager
def indexed_kb(tmp_path: Path, docs: dict[str, str] = KB_DOCS) -> Iterator[Treehop]:
    """A client (bag-of-words embedder, no reader processes) over ``docs`` written to
    ``tmp_path/kb`` and indexed under ``viking://resources/kb``: the small knowledge base the
    framework users' scripts (test_usage63 / 64 / 65) start from, one copy so they cannot
    drift."""
    for rel, text in docs.items():
        (tmp_path / "kb" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "kb" / rel).write_text(text, encoding="utf-8")
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), reader_processes=0) as th:
        th.add_resource(tmp_path / "kb", target_uri="viking://resources/kb")
        yield th


def chat_turns(n: int, text: str) -> list[dict[str, Any]]:
    """``n`` turns of a two-speaker chat, ``text`` with ``{i}`` the turn's number, one
    second apart: messages for ``add_messages``."""
    return [
        {"speaker": ("Ann", "Bob")[i % 2], "content": text.format(i=i), "timestamp": 1e9 + i}
        for i in range(n)
    ]


def pottery_memory() -> Treehop:
    """An in-memory client whose conversation ``c`` makes a memory find on "pottery
    workshop" stop short of ``limit`` slots: one session ("hot") of 40 short turns that all
    match (the global step's hits and the tree context's pool: they fold into three slots),
    and four sessions of three turns that match less. The deeper turn run's tests
    (``test_deeper_turn_slots``, ``test_leftovers60``) start from it."""
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    c.add_messages(
        chat_turns(40, "pottery workshop pottery {i}"), conversation_id="c", session_id="hot"
    )
    for s in ("s1", "s2", "s3", "s4"):
        c.add_messages(
            chat_turns(3, "we went hiking, then a pottery class " + s + " {i}"),
            conversation_id="c",
            session_id=s,
        )
    return c


def slot_shape(res: Any) -> list[Any]:
    """A find's slots as comparable values: uri, scores, and each carried turn's uri,
    position and carried flag."""
    return [
        (m.uri, m.score, m.own_score, [(t.uri, t.position, t.carried) for t in m.collapsed])
        for m in res.contexts()
    ]


def add_rollback_notes(client: Treehop, parent: Path) -> None:
    """Three texts that all match "kubernetes rollback deploy", added to ``client``: a folder
    ``parent/notes`` of two markdown files (alpha, gamma) and a text named beta. The
    framework filter tests of leftovers60 (LangChain's and LlamaIndex's) start from them."""
    folder = parent / "notes"
    folder.mkdir()
    (folder / "alpha.md").write_text("# Alpha\n\nkubernetes rollback deploy alpha.\n")
    (folder / "gamma.md").write_text("# Gamma\n\nkubernetes rollback deploy gamma.\n")
    client.add_resource(str(folder))
    client.add_resource("kubernetes rollback deploy, a text named beta", name="beta")


def recorded_searches(monkeypatch: Any) -> list[tuple[str, int]]:
    """``hierarchical_retriever.search_columns`` patched (for the test, through
    ``monkeypatch``) to note each store search it runs, (repr of the scope, limit), in
    order, then run it: the list it fills, for tests that count a find's searches."""
    from treehop import hierarchical_retriever as hr

    searches: list[tuple[str, int]] = []
    search = hr.search_columns

    def recorded(store: Any, vector: Any, scope: Any, limit: int, **kw: Any) -> Any:
        searches.append((repr(scope), limit))
        return search(store, vector, scope, limit, **kw)

    monkeypatch.setattr(hr, "search_columns", recorded)
    return searches


def report_from_a_fork(child: Callable[[], str], alarm_s: int = 60) -> tuple[str, int]:
    """Fork; the child runs ``child()`` under an alarm of ``alarm_s`` and reports its text
    (or a raised error's ``Type: message``) through a pipe, never returning into pytest.
    Returns the report and the child's exit code (a child killed by its alarm: no report,
    a non-zero code). One copy for every test of what a forked child inherits."""
    import os
    import signal

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        signal.alarm(alarm_s)
        out = "?"
        try:
            out = child()
        except BaseException as exc:
            out = f"{type(exc).__name__}: {exc}"
        finally:
            os.write(w, out.encode())
            os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        report = f.read()
    _, status = os.waitpid(pid, 0)
    return report, os.waitstatus_to_exitcode(status)


class FlakyEmbedder(BagOfWordsEmbedder):
    """Raises ``EmbeddingError("model outage")`` on its ``fail_at``-th ``embed`` call counted
    from :meth:`arm` (a model's outage in the middle of a write); ``arm(None)`` disarms."""

    def __init__(self) -> None:
        super().__init__()
        self.fail_at: int | None = None
        self.armed = 0

    def arm(self, fail_at: int | None) -> None:
        self.fail_at, self.armed = fail_at, 0

    def embed(self, texts: Sequence[str]) -> Any:
        from treehop.errors import EmbeddingError

        if self.fail_at is not None:
            self.armed += 1
            if self.armed == self.fail_at:
                raise EmbeddingError("model outage")
        return super().embed(texts)


def stored_keyword_statistics(store: Any) -> tuple[int, list[tuple[str, int]]] | None:
    """The keyword tagger's statistics as ``store`` holds them: document count and every
    term's frequency (term ids and the base's id aside; ``None``: none saved). Loading them
    also checks them (a damaged blob is ``IndexCorruptError``)."""
    from treehop.tagging.ingest import DELTA_KEY, STATE_KEY
    from treehop.tagging.keywords import KeywordTagger

    raw, delta = store.get_state(STATE_KEY), store.get_state(DELTA_KEY)
    if not raw:
        return None
    tagger = KeywordTagger.from_bytes(raw)
    if delta:
        tagger.apply_delta(delta)
    d = tagger.to_dict()
    return d["n_docs"], sorted(zip(d["terms"], d["df"], strict=True))


def index_files_open(idx: Path) -> list[str]:
    """This process's descriptors that point into the index folder ``idx``
    (``/proc/self/fd``): an open store holds its ``nodes.bin``, a closed one nothing."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith(str(idx) + os.sep):
            out.append(target[len(str(idx)) + 1 :])
    return sorted(out)


def two_note_index(idx: Path) -> Path:
    """A saved index of two notes (tides, a lighthouse), closed: no file of it open."""
    with Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource(
            "The tides in the harbour turn twice a day.", target_uri="viking://resources/tides.md"
        )
        th.add_resource(
            "The lighthouse lamp is serviced in May.", target_uri="viking://resources/light.md"
        )
    assert index_files_open(idx) == []
    return idx


_NUMPY_INTS: list[Any] = [
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
]


@st.composite
def numpy_real_scalars(draw: st.DrawFn) -> Any:
    """A numpy real scalar of any width, finite or not (what a bound computed with numpy
    is: the LangChain filter's and the core filter's numpy tests)."""
    if draw(st.booleans()):
        kind: Any = draw(st.sampled_from(_NUMPY_INTS))
        info = np.iinfo(kind)
        return kind(draw(st.integers(int(info.min), int(info.max))))
    kind, width = draw(st.sampled_from([(np.float16, 16), (np.float32, 32), (np.float64, 64)]))
    return kind(draw(st.floats(width=width)))  # type: ignore[arg-type]
