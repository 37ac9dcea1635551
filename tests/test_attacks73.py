"""Attacks on what stop 62 added (bench/README.md, "Attacks, stop 63 (helper attacks73)").
Each test fails on f7f9233 (main before this round) unless it says it is a control."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from langchain_treehop import TreehopRetriever, TreehopVectorStore
from treehop import InvalidQueryError, Treehop
from treehop import integration_kit as kit
from treehop.errors import StoreError, TreehopError, UnknownArgumentError
from treehop.models import Node
from treehop.redaction import register_secret
from treehop.stores.base import VectorStore
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded import column_files as emb_columns
from treehop.tagging import second_process
from treehop.tagging.base import NodeTags
from treehop.tagging.ingest import IngestTagger

from treehop_test_doubles import BagOfWordsEmbedder, stored_keyword_statistics

WAIT = 30.0  # (a bound on every wait below: a hang fails, it does not stall the run)


def _until(condition: Callable[[], bool]) -> None:
    """Poll ``condition`` (a state another thread reaches), failing after :data:`WAIT`."""
    end = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < end, "the state was never reached"
        time.sleep(0.001)


def _blocked_in(name: str) -> bool:
    """Whether a thread runs Python code in function ``name`` now (blocked in a lock taken
    by a ``with``: the function holding that ``with``). Any thread: a sync client's write
    tags on a worker thread of its loop."""
    return any(f.f_code.co_name == name for f in sys._current_frames().values())


# ------------------------------------- 1. one keyword tagger given to clients of two indexes


SEED = {"a": "seed text about plums and apples", "b": "seed text about cherries"}
NEW = {"a": "kiwis and plums in the first index", "b": "bananas and mangoes in the second"}


def _expected(name: str, with_new: bool) -> Any:
    """The statistics of an index that only ever saw its own texts."""
    with Treehop(None, embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(SEED[name], target_uri=f"viking://resources/{name}.md")
        if with_new:
            th.add_resource(NEW[name], target_uri=f"viking://resources/{name}2.md", is_text=True)
        return stored_keyword_statistics(th.store)


class _Gate:
    """The shared keyword tagger under a per-client wrapper (as a user's tagger keeps
    one): ``a`` counts, then waits for ``b`` to count, then fails; ``b`` counts, then
    waits until ``a``'s write has ended (its counts taken back)."""

    def __init__(self) -> None:
        self.a_counted = threading.Event()
        self.b_counted = threading.Event()
        self.a_done = threading.Event()
        self.armed = False


class _SharedTagger:
    def __init__(self, name: str, base: IngestTagger, gate: _Gate) -> None:
        self.name, self.base, self.gate = name, base, gate

    def tag_nodes(
        self, nodes: Sequence[Node], store: VectorStore, new_texts: Sequence[str] | None = None
    ) -> dict[str, NodeTags]:
        out = self.base.tag_nodes(nodes, store, new_texts)
        g = self.gate
        if g.armed and self.name == "a":
            g.a_counted.set()
            assert g.b_counted.wait(WAIT)
            raise InvalidQueryError("the first index's tagger failed")
        if g.armed and self.name == "b":
            assert g.a_counted.wait(WAIT)
            g.b_counted.set()
            assert g.a_done.wait(WAIT)
        return out

    def refit(self, store: VectorStore) -> None:
        self.base.refit(store)


@pytest.mark.parametrize("where", ["memory", "disk"])
def test_a_failed_write_takes_back_only_its_own_index_counts_with_a_shared_tagger(
    tmp_path: Path, where: str
) -> None:
    # f7f9233: one journal per tagger: the failed write on index a took index b's text
    # out of a's statistics (IndexCorruptError "df outside [1, n_docs]" at their next
    # load: a's tagging was broken for good)
    shared, gate = IngestTagger(), _Gate()
    paths = {n: (tmp_path / n if where == "disk" else None) for n in "ab"}
    clients = {
        n: Treehop(paths[n], embedder=BagOfWordsEmbedder(), tagger=_SharedTagger(n, shared, gate))
        for n in "ab"
    }
    try:
        for n, th in clients.items():
            th.add_resource(SEED[n], target_uri=f"viking://resources/{n}.md")
        before_a = stored_keyword_statistics(clients["a"].store)
        gate.armed = True
        got: dict[str, str] = {}

        def write(n: str) -> None:
            try:
                clients[n].add_resource(
                    NEW[n], target_uri=f"viking://resources/{n}2.md", is_text=True
                )
                got[n] = "written"
            except TreehopError as exc:
                got[n] = type(exc).__name__
            finally:
                if n == "a":
                    gate.a_done.set()

        threads = [threading.Thread(target=write, args=(n,)) for n in "ab"]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT)
        assert got == {"a": "InvalidQueryError", "b": "written"}
        gate.armed = False
        assert stored_keyword_statistics(clients["a"].store) == before_a
        assert stored_keyword_statistics(clients["b"].store) == _expected("b", True)
        assert not shared._journals  # (no batch left open)
        clients["a"].add_resource(NEW["a"], target_uri="viking://resources/a2.md", is_text=True)
        assert stored_keyword_statistics(clients["a"].store) == _expected("a", True)
    finally:
        for th in clients.values():
            th.close()


def test_two_indexes_counting_at_once_through_one_tagger_each_keep_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # f7f9233: the tagger's statistics in memory were swapped under a count in progress:
    # index a's write merged its text into a's statistics, index b's write (another
    # thread, b's own statistics lock) read b's into the same attribute, and a then saved
    # what the attribute held: a's new document was lost (n_docs 1 for 2 documents)
    parked, go = threading.Event(), threading.Event()
    merge = second_process.PreparedFit.merge

    def merge_then_park(self: Any, tagger: Any) -> Any:
        out = merge(self, tagger)
        if any("kiwis" in t for t in self._fit_texts):
            parked.set()
            assert go.wait(WAIT)
        return out

    monkeypatch.setattr(second_process.PreparedFit, "merge", merge_then_park)
    shared = IngestTagger()
    with (
        Treehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=shared) as a,
        Treehop(tmp_path / "b", embedder=BagOfWordsEmbedder(), tagger=shared) as b,
    ):
        a.add_resource(SEED["a"], target_uri="viking://resources/a.md")
        b.add_resource(SEED["b"], target_uri="viking://resources/b.md")
        errors: list[BaseException] = []

        def write_a() -> None:
            try:
                a.add_resource(NEW["a"], target_uri="viking://resources/a2.md", is_text=True)
            except BaseException as exc:  # (reported below)
                errors.append(exc)
                parked.set()

        t = threading.Thread(target=write_a)
        t.start()
        assert parked.wait(WAIT)
        done = threading.Event()

        def write_b() -> None:
            try:
                b.add_resource(NEW["b"], target_uri="viking://resources/b2.md", is_text=True)
            except BaseException as exc:
                errors.append(exc)
            finally:
                done.set()

        tb = threading.Thread(target=write_b)
        tb.start()
        # a is let go once b has written (f7f9233) or waits inside the tagger's count for
        # a's to end (one tagger counts into one index at a time)
        _until(lambda: done.is_set() or _blocked_in("tag_nodes"))
        go.set()
        t.join(WAIT)
        tb.join(WAIT)
        assert not errors
        assert stored_keyword_statistics(a.store) == _expected("a", True)
        assert stored_keyword_statistics(b.store) == _expected("b", True)


# ------------------------------------------- 2. the native import order: usearch, onnxruntime


def _fresh(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run in a fresh interpreter importing the code under test (a crash there is
    an exit by signal, not this test run's)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=240, env=env
    )


def test_the_offline_embedder_after_a_callers_usearch_import_is_an_error_not_a_crash() -> None:
    # f7f9233: a program that imported usearch itself before the embedder's first use died
    # with SIGSEGV in onnxruntime's import (exit -11, no message)
    got = _fresh(
        "import usearch.compiled\n"
        "from treehop.embedders.local_minilm import MiniLMEmbedder\n"
        "from treehop.errors import EmbeddingError\n"
        "try:\n"
        "    MiniLMEmbedder().embed(['hello'])\n"
        "except EmbeddingError as exc:\n"
        "    print('refused:', exc)\n"
    )
    assert got.returncode == 0, got.stderr[-2000:]
    assert "refused:" in got.stdout and "import onnxruntime" in got.stdout


def test_the_embedder_after_onnxruntime_then_usearch_still_embeds() -> None:
    # control: the order the lead's fix makes (onnxruntime first) keeps working
    got = _fresh(
        "import onnxruntime, usearch.compiled\n"
        "from treehop.embedders.local_minilm import MiniLMEmbedder\n"
        "print(len(MiniLMEmbedder().embed(['hello'])[0]))\n"
    )
    assert got.returncode == 0, got.stderr[-2000:]
    assert got.stdout.split() == ["384"]


@pytest.mark.parametrize("stub", ["module-without-spec", "finder-raising"])
def test_a_stubbed_or_blocked_onnxruntime_does_not_stop_the_graph(stub: str) -> None:
    # f7f9233: the graph's import step raised a raw ValueError ("onnxruntime.__spec__ is
    # None": a stub module put in sys.modules, as tests and slim deployments do) or the
    # finder's ImportError, so no graph could be built or loaded
    setup = {
        "module-without-spec": (
            "import sys, types\nsys.modules['onnxruntime'] = types.ModuleType('onnxruntime')\n"
        ),
        "finder-raising": (
            "import sys, importlib.abc\n"
            "class Block(importlib.abc.MetaPathFinder):\n"
            "    def find_spec(self, name, path, target=None):\n"
            "        if name.split('.')[0] == 'onnxruntime':\n"
            "            raise ImportError('blocked here')\n"
            "sys.meta_path.insert(0, Block())\n"
        ),
    }[stub]
    got = _fresh(setup + "from treehop.stores import _ann\nprint(_ann._index_class().__name__)\n")
    assert got.returncode == 0, got.stderr[-2000:]
    assert got.stdout.split() == ["Index"]


# ------------------------------------------------------- 3. hostile lock_timeout values


class _FloatRaising(float):
    """A number whose conversion fails (a caller's own numeric type)."""

    def __float__(self) -> float:
        raise ZeroDivisionError("no float here")


class _FractionRaising(Fraction):
    def __float__(self) -> float:
        raise ValueError("no float here")


@pytest.mark.parametrize("value", [_FloatRaising(1.0), _FractionRaising(1, 2)], ids=repr)
def test_a_lock_timeout_that_cannot_become_a_float_is_a_store_error(
    tmp_path: Path, value: Any
) -> None:
    # f7f9233: the conversion's own ZeroDivisionError / ValueError escaped EmbeddedStore()
    with pytest.raises(StoreError, match="lock_timeout must be a number of seconds"):
        EmbeddedStore(tmp_path / "idx", lock_timeout=value)


# ------------------------------------- 4. per-call unknown arguments: shown, redacted, bounded

SECRET = "plainkey73qqzzxx"  # (no recognisable key shape: only registration redacts it)

NAMES = {
    "a registered key": SECRET,
    "a key after 64 characters": "k" * 64 + SECRET,
    "a forged log line": "top_k\n[ERROR] forged",
    "right-to-left override": "\u202edlrow",
    "a megabyte": "x" * 1_000_000,
    "a password setting": "password=hunter2hunter2",
}


def _clean(text: str) -> None:
    assert SECRET not in text and "hunter2" not in text and "\n[ERROR]" not in text
    assert "\u202e" not in text and len(text) < 3_000


@pytest.fixture(scope="module")
def client() -> Any:
    register_secret(SECRET)
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource("alpha beta gamma", target_uri="viking://resources/a.md")
        yield th


def _lc_search(client: Treehop, how: str, kwargs: dict[str, Any]) -> Any:
    store = TreehopVectorStore(client=client)
    if how == "similarity_search":
        return store.similarity_search("alpha", **kwargs)
    if how == "mmr":
        return store.max_marginal_relevance_search("alpha", **kwargs)
    return store.as_retriever(search_kwargs=kwargs).invoke("alpha")


@pytest.mark.parametrize("case", sorted(NAMES))
@pytest.mark.parametrize("how", ["similarity_search", "mmr", "as_retriever"])
def test_a_vector_store_searchs_unknown_argument_is_shown_escaped_redacted_and_cut(
    client: Treehop, how: str, case: str
) -> None:
    # f7f9233: LangChain's vector store searches listed the unknown names as given (the
    # list's repr: a registered key whole, a megabyte name whole, a password), where the
    # retriever's invoke and the stores' delete show them through kit.shown_name
    with pytest.raises(UnknownArgumentError) as ei:
        _lc_search(client, how, {NAMES[case]: 1})
    _clean(str(ei.value))
    assert "unknown search argument" in str(ei.value)


def test_a_vector_store_searchs_hint_keeps_the_name_meant(client: Treehop) -> None:
    # control: an ordinary typo still names the keyword meant
    with pytest.raises(UnknownArgumentError, match="'fetchk': did you mean 'fetch_k'"):
        _lc_search(client, "mmr", {"fetchk": 3})


def test_a_per_call_search_type_value_is_not_echoed(client: Treehop) -> None:
    # f7f9233: invoke(q, search_type=<a registered key>) showed the value (cut to 40
    # characters, not redacted)
    with pytest.raises(UnknownArgumentError) as ei:
        TreehopRetriever(client=client).invoke("alpha", search_type=SECRET)
    _clean(str(ei.value))
    assert "search_type of" in str(ei.value)


@pytest.mark.parametrize(
    "call",
    ["langchain-invoke", "langchain-search", "langchain-delete", "llamaindex-query", "core"],
)
def test_twenty_thousand_unknown_arguments_make_a_bounded_error(client: Treehop, call: str) -> None:
    # f7f9233: every unknown name listed: a 250 kB message for 20,000 keywords (attacks71's
    # open item), built in up to 3 s
    from llama_index.core.vector_stores.types import VectorStoreQuery

    from llama_index.vector_stores.treehop import TreehopVectorStore as LIVectorStore

    kwargs = {f"option{i:05d}": 1 for i in range(20_000)}
    with pytest.raises(UnknownArgumentError) as ei:
        if call == "langchain-invoke":
            TreehopRetriever(client=client).invoke("alpha", **kwargs)
        elif call == "langchain-search":
            _lc_search(client, "similarity_search", kwargs)
        elif call == "langchain-delete":
            TreehopVectorStore(client=client).delete(["nope"], **kwargs)
        elif call == "llamaindex-query":
            LIVectorStore(client).query(VectorStoreQuery(query_str="alpha"), **kwargs)
        else:
            raise kit.unknown_arguments("Owner", kwargs, ["k", "mode"])
    text = str(ei.value)
    assert len(text) < 3_000, len(text)
    # (the first names, then how many more: the merge with helper leftovers63's `listed`,
    # which bounds the same messages, counts them unformatted)
    assert "option00000" in text and re.search(r"and 19,?99\d more", text), text[:300]


# --------------------------- 5. a closed store's index path now naming another index folder


def _index_of(path: Path, word: str, owner: str) -> None:
    """An index of five files about ``word`` (every index built so is the same shape:
    same generation, rows and file sizes), its meta naming ``owner``."""
    src = path.parent / f"src-{word}"
    (src / "docs").mkdir(parents=True)
    for i in range(5):
        (src / "docs" / f"f{i}.md").write_text(f"# {word} {i}\n\n" + f"{word} text {i} " * 40)
    store = EmbeddedStore(path)
    store.meta["owner"] = owner  # (saved with the write's commit)
    with Treehop(path, store=store, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource(src / "docs", target_uri="viking://resources/docs")


@pytest.mark.parametrize("swap", ["symlink-flipped", "folder-replaced"])
def test_a_closed_store_whose_path_names_another_index_reads_that_index_whole(
    tmp_path: Path, swap: str
) -> None:
    # f7f9233: the reopen after close() took the let-go generation's manifest when CURRENT
    # named the same generation number, so the other folder's column files were read with
    # the first index's manifest, meta and BM25 index (kept in memory for the reopen): its
    # nodes' texts with the first index's terms (document_frequency('gamma') 0) and meta
    a, b = tmp_path / "a", tmp_path / "b"
    _index_of(a, "alpha", "a")
    _index_of(b, "gamma", "b")
    path = tmp_path / "current"
    if swap == "symlink-flipped":
        path.symlink_to(a)
    else:
        shutil.copytree(a, path)
    store = EmbeddedStore(path)
    try:
        assert store.meta["owner"] == "a" and store.lexical is not None
        assert store.lexical.document_frequency("alpha") > 0
        store.close()
        if swap == "symlink-flipped":  # (a blue-green deployment's atomic flip)
            (tmp_path / "next").symlink_to(b)
            os.replace(tmp_path / "next", path)
        else:
            shutil.rmtree(path)
            shutil.copytree(b, path)
        node = store.get(["viking://resources/docs/f1.md"])[0]
        assert node is not None and "gamma" in node.content
        assert store.meta["owner"] == "b"
        lexical = store.lexical
        assert lexical is not None
        assert lexical.document_frequency("gamma") > 0
        assert lexical.document_frequency("alpha") == 0
    finally:
        store.close()


@pytest.mark.parametrize(
    "args",
    [
        {"query": "alpha", SECRET: 1},
        {"query": "alpha", "k" * 30 + SECRET: 1},
        {"query": "alpha", "limit": SECRET},
        {"query": "alpha", "password=hunter2hunter2": 1},
    ],
    ids=["name", "name-after-30", "value", "password-name"],
)
async def test_an_mcp_tools_refused_argument_shows_no_secret(
    tmp_path: Path, args: dict[str, Any]
) -> None:
    # f7f9233: the MCP server's argument errors cut names and values to 60 characters but
    # did not redact them: a registered key given as an argument's name or value went back
    # whole in the tool's error (and into the agent's context and logs)
    from mcp import Client

    from treehop import AsyncTreehop
    from treehop.mcp_server import build_server

    register_secret(SECRET)
    a = AsyncTreehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        async with Client(build_server(a)) as client:
            res = await client.call_tool("find", args)
            assert res.is_error
            text = res.content[0].text  # type: ignore[union-attr]
            _clean(text)
            assert "argument" in text
    finally:
        await a.close()


# ------------------------------------------- 6. the saved URIs rewritten under an open store


def test_saved_uris_rewritten_in_place_under_an_open_store_are_a_typed_error(
    tmp_path: Path,
) -> None:
    # f7f9233: uris.bin rewritten in place (bytes that are not UTF-8; checksums are
    # checked at the open only) made find and read raise a raw UnicodeDecodeError
    from treehop.errors import IndexCorruptError

    src = tmp_path / "src" / "s"
    src.mkdir(parents=True)
    for i in range(6):
        (src / f"f{i}.md").write_text(f"# F{i}\n\n" + f"apples pears notes {i} " * 50)
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource(src, target_uri="viking://resources/s")
        assert th.find("apples pears").resources
        uris = next((tmp_path / "idx").glob("data-*")) / "uris.bin"
        before = [r.uri for r in th.find("apples pears notes").resources]
        with open(uris, "r+b") as fh:  # (another program's in-place rewrite)
            fh.write(b"\xff" * uris.stat().st_size)
        # helper leftovers66c: a file under 4 MiB is read whole at the open (a map of it
        # could be cut under a read: SIGBUS), so the open store answers from the bytes its
        # open checked -- the same answer, no raw UnicodeDecodeError -- and the damage is
        # the next open's typed error (the decode guard of a mapped file stays for files of
        # 4 MiB or more)
        assert uris.stat().st_size < emb_columns._LEASE_BYTES
        assert [r.uri for r in th.find("apples pears notes").resources] == before
        assert th.read("viking://resources/s/f3.md")
    with (
        pytest.raises(IndexCorruptError),
        Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as again,
    ):
        again.find("apples pears notes")
