"""Adversarial pass attacks62 (after stop 58: turn-target confinement, find's typed targets,
vector stores' base_uri, damaged sessions, ``AddResult.replaced``, ``_addressable``).

Each test was written failing first (bench/README.md, "Adversarial pass (helper attacks62)").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from treehop import Treehop
from treehop.errors import InvalidQueryError, InvalidURIError

from treehop_test_doubles import BagOfWordsEmbedder

# -- 1. a named memory write under another memory: refused, not a silent replacement --------

LONG = " ".join(f"pottery word{i} sentence." for i in range(800))  # (a chunked memory)


def _write_under(c: Treehop, how: str) -> object:
    """A write whose place lies below the memory ``viking://~/memories/home``."""
    if how == "add_memory":
        return c.add_memory("I moved", name="home/x")
    if how == "remember":
        return c.remember("I moved", category="home", name="x")
    if how == "add_memory deeper":
        return c.add_memory("I moved", name="home/a/b")
    from treehop.ingest.records import add_records

    return add_records(c, [("I moved", {"uri": "viking://~/memories/home/x"})])


@pytest.mark.parametrize("first", ["I live in Lisbon", LONG], ids=["leaf", "chunked"])
@pytest.mark.parametrize("how", ["add_memory", "remember", "add_memory deeper", "add_records"])
def test_a_memory_write_below_another_memory_is_refused(first: str, how: str) -> None:
    """Before: ``add_memory("I moved", name="home/x")`` over the memory ``home`` (or
    ``remember(category="home", name="x")``, or a record placed there) turned ``home`` into
    a directory holding ``x``: "I live in Lisbon" was gone, and the result said
    ``replaced=False`` (a chunked ``home`` became a directory of its chunks and ``x``). Now
    a place below a memory is refused as a directory of memories is, before any write."""
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.add_memory(first, name="home")
        before = c.read("viking://~/memories/home")
        with pytest.raises((InvalidQueryError, InvalidURIError), match="memor"):
            _write_under(c, how)
        assert c.read("viking://~/memories/home") == before
        [entry] = c.ls("viking://~/memories")
        assert entry.kind in ("text", "file")
        # (the controls: the memory itself is replaced by its name, as documented; a new
        # name beside it is a new memory)
        assert c.add_memory("I live in Porto", name="home").replaced is True
        assert c.add_memory("I moved", name="away/x").replaced is False


# -- 2. a damaged session: its owner can delete it ------------------------------------------


def test_the_owner_can_delete_a_damaged_session() -> None:
    """Before: Alice's damaged session (a message's content a dict) was IndexCorruptError
    from ``delete`` too, so she could not remove it, and her ``list_sessions()`` (which
    names it, as attacks61 chose) failed for good: no call of hers ended it. Now its owner
    deletes it (the blob emptied, the id unlisted); another user still reads it as missing
    and cannot delete it."""
    import json

    from treehop.errors import IndexCorruptError, SessionNotFoundError
    from treehop.sessions import MemoryState, SessionStore

    state = MemoryState()
    store = SessionStore(state)
    alice, kept = store.create_session("alice"), store.create_session("alice")
    store.add_message(alice, "user", "my bank pin is 4321", user="alice")
    raw = json.loads(state.get_state(f"sessions/{alice}"))
    raw["messages"][0]["content"] = {"pin": "4321"}
    state.put_state(f"sessions/{alice}", json.dumps(raw).encode())
    owner = SessionStore(state).for_user("alice")
    with pytest.raises(IndexCorruptError):
        owner.list_sessions()
    with pytest.raises(SessionNotFoundError):
        SessionStore(state).for_user("bob").delete(alice)
    assert b"4321" in state.get_state(f"sessions/{alice}")  # (bob's call left it)
    owner.delete(alice)
    assert not state.get_state(f"sessions/{alice}")
    assert [s.session_id for s in owner.list_sessions()] == [kept]
    with pytest.raises(SessionNotFoundError):
        owner.get(alice)


# -- 3. bench_natural --resume on a tampered --json file ------------------------------------


def _bench_natural() -> Any:
    import sys
    from pathlib import Path

    bench = str(Path(__file__).resolve().parents[1] / "bench")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    import bench_natural

    return bench_natural


_SETTINGS = {
    "embedder": "k",
    "chunk_chars": None,
    "config": {},
    "max_queries": 10,
    "budgets": [400],
}


def _row(dataset: str, half: str, key: str) -> dict[str, object]:
    scores = {"n": 3, "ndcg@10": 0.5, "R@10": 0.5, "R@100": 1.0, "MRR@10": 0.5, "ctx@400": 0.5}
    return {"dataset": dataset, "half": half, "row": key, "name": key, "p50_ms": 1.0, **scores}


def test_resume_counts_a_set_done_by_its_own_rows_only(tmp_path: Path) -> None:
    """Before: a file holding only a set's per-kind rows (``ta/how-to``, written by hand or
    by a merge) counted ``ta`` as done, so ``--resume`` never ran its own rows and the table
    lacked them. Now a set is done when its own rows (dataset ``ta``) cover every asked row
    and half; its per-kind rows come with them."""
    bn = _bench_natural()
    rows = [r for r in bn.ROWS if r.key in ("flat-bm25", "find")]
    kinds = [_row("ta/how-to", h, r.key) for h in ("dev", "test") for r in rows]
    whole = [_row("tb", h, r.key) for h in ("dev", "test") for r in rows]
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"settings": _SETTINGS, "rows": kinds + whole, "notes": []}))
    kept, _, done = bn.resumed(path, ["ta", "tb"], rows, ["dev", "test"], _SETTINGS)
    assert done == {"tb"}
    assert {t.dataset for t in kept} == {"tb"}  # (ta runs again whole)


@pytest.mark.parametrize(
    "text",
    [
        "{",
        "[]",
        "null",
        json.dumps({"settings": _SETTINGS, "rows": 5, "notes": []}),
        json.dumps({"settings": _SETTINGS, "rows": [{"dataset": "ta"}], "notes": []}),
        json.dumps({"settings": _SETTINGS, "rows": []}),
        json.dumps({"settings": _SETTINGS, "rows": [], "notes": [1]}),
        b"\xff\xfe\x00",
    ],
    ids=["not-json", "a-list", "null", "rows-5", "row-short", "no-notes", "note-1", "not-utf8"],
)
def test_resume_refuses_a_damaged_file_in_words(tmp_path: Path, text: str | bytes) -> None:
    """Before: JSONDecodeError, AttributeError, KeyError, TypeError or UnicodeDecodeError
    tracebacks. Now one ``SystemExit`` naming the file (before any set runs; the file is
    left as it was)."""
    bn = _bench_natural()
    rows = [r for r in bn.ROWS if r.key in ("flat-bm25", "find")]
    path = tmp_path / "run.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    before = path.read_bytes()
    with pytest.raises(SystemExit, match=r"--resume: .*run\.json"):
        bn.resumed(path, ["ta"], rows, ["dev"], _SETTINGS)
    assert path.read_bytes() == before


# -- 4. a vector store's passages never land inside a document -------------------------------


@pytest.mark.parametrize(
    "base",
    [
        "viking://resources/long.md",  # a chunked file
        "viking://resources/long.md/sub",  # below one
        "viking://~/memories/home",  # a chunked memory
        "viking://~/memories/note/sub",  # below a memory (a leaf)
        "viking://resources/short.md/sub",  # below a file (a leaf)
    ],
)
@pytest.mark.parametrize("framework", ["langchain", "llamaindex"])
def test_a_vector_stores_passages_never_land_inside_a_document(base: str, framework: str) -> None:
    """Before: ``TreehopVectorStore(base_uri=<a chunked document, or a path below any
    document>).add_texts(...)`` wrote there: the document became a directory of its chunks
    and the passages (``read`` answered a listing, not its text), or a leaf memory a
    directory (its text gone). Only a leaf at or below the base was refused. Now every
    ancestor is checked, a chunked document as a leaf, before any write."""
    from llama_index.core.schema import TextNode

    from langchain_treehop import TreehopVectorStore
    from llama_index.vector_stores.treehop import TreehopVectorStore as LIStore

    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.add_resource(LONG, target_uri="viking://resources/long.md")
        c.add_resource("a short page", target_uri="viking://resources/short.md")
        c.add_memory(LONG, name="home")
        c.add_memory("I live in Lisbon", name="note")
        docs = ["long.md", "short.md"]
        mems = ["home", "note"]
        uris = [f"viking://resources/{d}" for d in docs] + [
            f"viking://~/memories/{m}" for m in mems
        ]
        before = {u: c.read(u) for u in uris}
        with pytest.raises(InvalidURIError, match="inside"):
            if framework == "langchain":
                store = TreehopVectorStore(client=c, base_uri=base)
                store.add_texts(["I moved"], metadatas=[{"source": "x.md"}])
            else:
                li = LIStore(client=c, base_uri=base)
                vec = BagOfWordsEmbedder().embed_query("I moved").tolist()
                li.add([TextNode(text="I moved", embedding=vec)])
        assert {u: c.read(u) for u in uris} == before
        # (the control: a base beside the documents takes passages, again and again)
        fine = TreehopVectorStore(client=c, base_uri="viking://resources/vs")
        fine.add_texts(["I moved", LONG], metadatas=[{"source": "x.md"}, {"source": "x.md"}])
        fine.add_texts(["I moved", LONG], metadatas=[{"source": "x.md"}, {"source": "x.md"}])


# -- 5. add_resource never writes inside a document -------------------------------------------


@pytest.mark.parametrize("first", ["a short page", LONG], ids=["leaf", "chunked"])
@pytest.mark.parametrize("what", ["text", "file", "folder"])
def test_add_resource_below_a_document_is_refused(tmp_path: Path, first: str, what: str) -> None:
    """Before: ``add_resource("x", target_uri="viking://resources/a.md/b.md")`` over the
    document ``a.md`` made ``a.md`` a directory holding ``b.md``: its text was gone (a
    chunked one a directory of its chunks and ``b.md``). Now a target below a document is
    an InvalidURIError before anything is read or written (as a vector store's base is)."""
    src: str | Path = "I moved"
    if what != "text":
        (tmp_path / "d").mkdir()
        (tmp_path / "d" / "b.md").write_text("I moved")
        src = tmp_path / "d" if what == "folder" else tmp_path / "d" / "b.md"
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.add_resource(first, target_uri="viking://resources/a.md")
        before = c.read("viking://resources/a.md")
        with pytest.raises(InvalidURIError, match="inside the document"):
            c.add_resource(src, target_uri="viking://resources/a.md/sub/b.md")
        assert c.read("viking://resources/a.md") == before
        assert [e.uri for e in c.ls("viking://resources")] == ["viking://resources/a.md"]
        # (the control: the document itself is replaced by its URI, as documented)
        c.add_resource("a new page", target_uri="viking://resources/a.md", is_text=True)
        assert c.read("viking://resources/a.md") == "a new page"


def test_a_folder_with_a_chunks_key_in_its_metadata_is_no_document(tmp_path: Path) -> None:
    """The control of section 5: a caller's ``metadata={"chunks": 3}`` lands on a folder's
    node too; the folder still takes files below it (a document is told by its children)."""
    (tmp_path / "d" / "sub").mkdir(parents=True)
    (tmp_path / "d" / "sub" / "a.md").write_text("hello")
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.add_resource(tmp_path / "d", target_uri="viking://resources/d", metadata={"chunks": 3})
        c.add_resource("x", target_uri="viking://resources/d/sub/b.md", is_text=True)
        c.add_memory("a note", name="m/one")
        assert c.add_memory("another", name="m/two").replaced is False


@pytest.mark.parametrize(
    "metadata",
    [{"uri": "viking://resources/a.md/x"}, {"source": "a.md/x.md"}],
    ids=["uri", "source"],
)
def test_a_record_below_a_document_is_refused(metadata: dict[str, str]) -> None:
    """Before: ``add_records(c, [("I moved", {"uri": "viking://resources/a.md/x"})])`` (or a
    ``source`` path below ``a.md``) made the document ``a.md`` a directory of records, its
    text gone. Now the batch is refused before any write, as add_resource refuses it."""
    from treehop.ingest.records import add_records

    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.add_resource("a short page", target_uri="viking://resources/a.md")
        with pytest.raises(InvalidURIError, match="inside the document"):
            add_records(c, [("beside", {"source": "b.md"}), ("I moved", metadata)])
        assert c.read("viking://resources/a.md") == "a short page"
        assert [e.uri for e in c.ls("viking://resources")] == ["viking://resources/a.md"]
