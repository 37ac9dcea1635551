"""Attacks on stop 65's surface (helper attacks78, bench/README.md "(helper attacks78)").

1. ``validation.shown_value`` / ``redaction.shown_name`` built the whole repr of a container
   that is not exactly a built-in one: a ``deque``, an ``OrderedDict``, a ``defaultdict``,
   a dict view, a ``list`` / ``str`` subclass, a ``bytearray`` (5 million items: 0.3-2.5 s
   and a 39 MB string for a 100-character message), and ``shown_name`` / ``first_few`` did
   the same through ``str`` for a tuple key.
2. Metadata holding one list at every level (70 references, 10**7 values as JSON) was
   written and walked whole by ``plain_metadata``, ``stable_id`` and every check: 76-91 s
   for one document; a cycle, a non-string key beside string ones and a list nested 3,000
   deep were Python's raw ``ValueError`` / ``TypeError`` / ``RecursionError`` out of
   ``stable_id``, and a mapping or list whose own methods raise escaped as its own error.

Each test fails on 06c8a981 unless it says it is a control.
"""

from __future__ import annotations

import collections
import json
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from llama_index.core.schema import TextNode

from langchain_treehop import TreehopVectorStore as LangChainStore
from langchain_treehop import add_documents as lc_add
from llama_index.vector_stores.treehop import TreehopVectorStore as LlamaIndexStore
from treehop import Treehop
from treehop import arguments as argmod
from treehop.errors import IngestError, InvalidQueryError, PartialWriteError, StoreError
from treehop.redaction import listed, register_secret, shown_name
from treehop.validation import shown_value

from treehop_test_doubles import BagOfWordsEmbedder

N = 10**5


class Counted:
    """An element that counts how often its repr is written (the work a message does)."""

    calls = 0

    def __repr__(self) -> str:
        Counted.calls += 1
        return "c"


class Sub(list[Any]):
    """A list subclass keeping list's repr."""


Pair = collections.namedtuple("Pair", "a b")


class Text(str):
    """A str subclass keeping str's repr."""


def _counted_shapes() -> dict[str, Any]:
    one = Counted()
    many = [one] * N
    return {
        "deque": collections.deque(many),
        "OrderedDict": collections.OrderedDict((i, one) for i in range(N)),
        "defaultdict": collections.defaultdict(int, {i: one for i in range(N)}),
        "dict values view": {i: one for i in range(N)}.values(),
        "list subclass": Sub(many),
        "deque in a list": [collections.deque(many)],
        "list subclass in a dict": {"k": Sub(many)},
        "a deque of one big list": collections.deque([many], maxlen=2),
        "an OrderedDict of one big list": collections.OrderedDict(a=many),
        "a defaultdict of one big list": collections.defaultdict(list, a=many),
        "a dict view of one big list": {1: many}.items(),
    }


@pytest.mark.parametrize("shape", sorted(_counted_shapes()))
def test_a_refused_container_of_any_kind_is_shown_without_writing_it_whole(shape: str) -> None:
    # 06c8a981: repr() of the whole container, every element's repr written (10**5 calls)
    value = _counted_shapes()[shape]
    Counted.calls = 0
    text = shown_value(value)
    assert len(text) <= 100 and Counted.calls <= 100, (text, Counted.calls)


def test_control_a_str_subclass_and_a_bytearray_are_cut_as_repr_would_read() -> None:
    # control (passes on 06c8a981 too, where the whole 10**6-character repr was built first
    # and cut: no element to count): the cut form, now made from a slice
    for value, start in ((Text("x" * 10**6), "'xxx"), (bytearray(10**6), "bytearray(b'\\x00")):
        assert shown_value(value).startswith(start) and len(shown_value(value)) == 100


def test_find_refusing_a_deque_limit_writes_a_bounded_message(tmp_path: Path) -> None:
    # the public path: a limit computed as a deque of counted items
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder()) as c:
        Counted.calls = 0
        with pytest.raises(InvalidQueryError) as caught:
            c.find("soup", limit=collections.deque([Counted()] * N))  # type: ignore[arg-type]
    assert Counted.calls <= 100 and len(str(caught.value)) < 400, Counted.calls


def test_a_tuple_name_is_shown_and_sorted_without_writing_it_whole() -> None:
    # 06c8a981: str() of the tuple key whole, in shown_name and in first_few's sort key
    names: list[tuple[Any, ...]] = [tuple([Counted()] * N), ("a", 1)]
    Counted.calls = 0
    text = listed(names)
    assert Counted.calls <= 200 and len(text) < 200, (Counted.calls, text)
    assert shown_name(names[1]) == repr("('a', 1)")


@pytest.mark.parametrize(
    "value",
    [
        collections.OrderedDict(a=1),
        collections.deque([1, "x"], maxlen=3),
        collections.Counter("aab"),
        collections.defaultdict(list, a=[1]),
        {1: 2}.items(),
        Sub([Sub(), (1,)]),
        Text("a\u202eb\ud800"),
        bytearray(b"\x00a"),
        Pair(1, [2]),
        frozenset({1}),
        collections.deque([collections.OrderedDict(x=collections.defaultdict(int))]),
        collections.deque(maxlen=0),
        collections.defaultdict(None, {1: (2,)}),
        collections.OrderedDict(a=1).keys(),
        {}.values(),
    ],
    ids=repr,
)
def test_control_a_small_value_of_any_kind_reads_as_its_repr(value: Any) -> None:
    # control (passes on 06c8a981 too): what fits is shown exactly as repr / str write it
    assert shown_value(value) == repr(value)
    assert shown_name(value) == repr(str(value)[:60] + ("..." if len(str(value)) > 60 else ""))


# -- 2. metadata that is larger as JSON than as given ------------------------------------


class CountedPath(PurePosixPath):
    """A path that counts how often it is turned into text (``plain_metadata``'s work)."""

    calls = 0

    def __str__(self) -> str:
        CountedPath.calls += 1
        return "p"


def _shared(depth: int, leaf: Any) -> list[Any]:
    """One list of ten references to one list, ``depth`` levels, above ``leaf`` (a list: the
    bottom list itself) or ten references to it."""
    level: list[Any] = leaf if isinstance(leaf, list) else [leaf] * 10
    for _ in range(depth):
        level = [level] * 10
    return level


def _cycle() -> dict[str, Any]:
    me: dict[str, Any] = {}
    me["me"] = me
    return me


class RaisingList(list[Any]):
    def __iter__(self) -> Any:
        raise RuntimeError("a caller's list that refuses to be read")


def _deep(levels: int) -> list[Any]:
    top: list[Any] = []
    inner = top
    for _ in range(levels):
        inner.append([])
        inner = inner[0]
    return top


def _add(way: str, client: Treehop, metadata: dict[Any, Any]) -> None:
    if way == "langchain add_documents":
        lc_add(
            client,
            [Document(page_content="soup", metadata=metadata)],
            base_uri="viking://resources/x",
        )
    elif way == "langchain vector store":
        LangChainStore(client=client).add_texts(["soup"], metadatas=[metadata])
    else:
        LlamaIndexStore(client).add([TextNode(text="soup", metadata=metadata)])


WAYS = ["langchain add_documents", "langchain vector store", "llamaindex vector store"]


@pytest.mark.parametrize("way", WAYS)
def test_metadata_sharing_one_list_at_every_level_is_refused_before_it_is_walked(
    way: str, tmp_path: Path
) -> None:
    # 06c8a981: plain_metadata turned each of the 5 * 10**5 leaf paths into text (and the
    # core then wrote them all as JSON: 76-91 s for 10**7 ints); now refused by its bound,
    # unwalked
    CountedPath.calls = 0
    # (10**5 lists of five paths and five 1,000-character texts: 500 MB as JSON; the texts
    # make the bound's walk short)
    bottom = [CountedPath("p")] * 5 + ["x" * 1000] * 5
    with (
        Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder()) as c,
        pytest.raises(IngestError, match="larger than 5000000 bytes as JSON"),
    ):
        _add(way, c, {"a": _shared(4, bottom)})
    assert CountedPath.calls == 0


BROKEN: dict[str, tuple[dict[Any, Any], str]] = {
    "a cycle": ({"a": _cycle()}, "holds itself"),
    "a list that raises": ({"a": RaisingList([1])}, "could not be read"),
    "mixed keys": ({1: "a", "b": 2}, "JSON-serialisable|keys must be strings"),
    "nested 3000 deep": ({"a": _deep(3000)}, "JSON-serialisable|deeper|too deep"),
}


@pytest.mark.parametrize(
    ("way", "case"),
    # (a TextNode refuses an int key itself, and LlamaIndex's dump writes a nested one as text)
    [(w, k) for w in WAYS for k in sorted(BROKEN) if not (k == "mixed keys" and "llama" in w)],
)
def test_metadata_that_cannot_be_json_is_a_typed_refusal(
    way: str, case: str, tmp_path: Path
) -> None:
    # 06c8a981: raw ValueError ("Circular reference detected"), RuntimeError, TypeError
    # ("'<' not supported") and RecursionError out of stable_id, json.dumps and LlamaIndex's
    # metadata string
    metadata, why = BROKEN[case]
    with (
        Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder()) as c,
        pytest.raises(IngestError, match=why),
    ):
        _add(way, c, metadata)


@pytest.mark.parametrize("way", WAYS)
def test_control_metadata_sharing_a_list_twice_is_stored(way: str, tmp_path: Path) -> None:
    # control (passes on 06c8a981 too): sharing is no refusal in itself
    tags = ["soup", "salt"]
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder()) as c:
        _add(way, c, {"a": tags, "b": tags, "n": _shared(2, 1)})
        hit = c.find("soup", limit=1).memories + c.find("soup", limit=1).resources
    assert hit and hit[0].metadata["a"] == hit[0].metadata["b"] == tags


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner) | st.tuples(inner, inner) | st.dictionaries(st.text(), inner),
    max_leaves=40,
)


@settings(max_examples=150, deadline=None)
@given(_JSON)
def test_the_bound_never_refuses_a_value_within_its_json_size(value: Any) -> None:
    # control of the new walk: its count is a lower bound of the JSON text, compact or not
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, separators=(",", ":"))):
        assert argmod.json_bytes_problem(value, len(text.encode("utf-8"))) is None
    assert argmod.json_bytes_problem(value, -1) is not None


# -- 3. a caller's store failing midway with its own StoreError ----------------------------

SECRET = "sk-attacks78-0123456789abcdef"


class _Unprintable(StoreError):
    def __str__(self) -> str:
        raise RuntimeError("a plug-in's error that cannot be written")


def _failing_store(error: StoreError) -> Any:
    from test_leftovers64b import _Engine

    class Failing(_Engine):  # type: ignore[misc,valid-type]
        def upsert(self, nodes: Any, vectors: Any) -> None:
            self.__dict__["upserts"] = self.__dict__.get("upserts", 0) + 1
            if self.fail_at is not None and self.__dict__["upserts"] >= self.fail_at:
                raise error
            super(_Engine, self).upsert(nodes, vectors)

    return Failing()


def test_a_partial_write_does_not_echo_a_key_in_the_stores_own_error(tmp_path: Path) -> None:
    # 06c8a981: "engine refused key sk-attacks78-... for this write; 6 node(s) ..." (the
    # plug-in's StoreError passes as it is, and its text was put whole into treehop's)
    from test_leftovers64b import _failing_midway, _folder

    register_secret(SECRET)
    store = _failing_store(StoreError(f"engine refused key {SECRET} for this write"))
    th, _ = _failing_midway(store, tmp_path)
    with pytest.raises(PartialWriteError) as caught:
        th.add_resource(_folder(tmp_path), target_uri="viking://resources/d")
    text = str(caught.value)
    assert "engine refused key *** for this write" in text and "6 node(s)" in text
    assert not any(SECRET[i : i + 8] in text for i in range(len(SECRET) - 7))


def test_a_partial_write_from_an_unprintable_store_error_is_still_said(tmp_path: Path) -> None:
    # 06c8a981: str() of the plug-in's error raised its RuntimeError out of the write
    from test_leftovers64b import _failing_midway, _folder

    th, _ = _failing_midway(_failing_store(_Unprintable()), tmp_path)
    with pytest.raises(PartialWriteError, match=r"^_Unprintable; 6 node"):
        th.add_resource(_folder(tmp_path), target_uri="viking://resources/d")


# -- 4. the MCP gate: a number of more digits than Python converts ----------------------

BIG = "1" * 5000


@pytest.mark.parametrize(
    ("line", "answered_to"),
    [
        (f'{{"jsonrpc":"2.0","id":{BIG},"method":"ping"}}', None),
        (f'{{"jsonrpc":"2.0","id":-{BIG},"method":"ping"}}', None),
        (
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"find",'
            f'"arguments":{{"query":"q","limit":{BIG}}}}}}}',
            1,
        ),
        (f'{{"jsonrpc":"2.0","id":"r","method":"ping","params":{{"a":[-{BIG}]}}}}', "r"),
    ],
    ids=["id", "negative id", "a tool's argument", "a param"],
)
def test_a_5000_digit_number_is_an_invalid_request_answered_to_its_id(
    line: str, answered_to: Any
) -> None:
    # 06c8a981: "Parse error: the line is not JSON" to id null (int()'s digit limit in
    # Python's parser), though the line is JSON: a readable id's client never got its answer
    from mcp_types import INVALID_REQUEST

    from treehop import mcp_server

    answer = mcp_server._refusal(line)
    assert answer is not None and answer.error.code == INVALID_REQUEST
    assert answer.id == answered_to and "number past its range" in answer.error.message


def test_control_a_4300_digit_number_is_passed_on() -> None:
    # control (passes on 06c8a981 too): within int()'s limit nothing changes
    from treehop import mcp_server

    line = f'{{"jsonrpc":"2.0","id":7,"method":"ping","params":{{"a":{"1" * 4300}}}}}'
    assert mcp_server._screen(line) == mcp_server._Screened(None, line, request_id=7, method="ping")
