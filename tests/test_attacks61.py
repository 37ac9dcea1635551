"""Adversarial pass attacks61 (after stop 57: leaf targets, ``uri.within_any``, the new filter
ops, ``SessionNotFoundError``).

Each test was written failing first (bench/README.md, "Adversarial pass (helper attacks61)").
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.cli import ClientOptions, ExitCode, main
from treehop.errors import (
    IndexCorruptError,
    InvalidQueryError,
    NotFoundError,
    SessionNotFoundError,
)
from treehop.sessions import MemoryState, SessionStore

from treehop_test_doubles import BagOfWordsEmbedder

# -- 1. find(target_uri=<one memory turn>): the slot carries no turn outside the target ----------

SESSION = "viking://~/memories/conversations/c1/s1"
TURNS = [
    ("Ann", "Did you go to the pottery workshop?"),
    ("Bob", "Yes, last Saturday, it was great."),
    ("Ann", "What did you make there?"),
    ("Bob", "A bowl for my mother, and my bank pin is 4321."),
    ("Ann", "I am training for the Berlin marathon."),
]


@pytest.fixture(scope="module")
def chat() -> Iterator[Treehop]:
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.add_messages(
            [{"speaker": s, "content": t} for s, t in TURNS],
            conversation_id="c1",
            session_id="s1",
            session_time="2024-03-01T10:00:00Z",
        )
        yield c


def _turn(i: int) -> str:
    return f"{SESSION}/turn-{i:05d}"


def _outside_text(targets: list[int]) -> list[str]:
    """The turns' texts a scope of ``targets`` leaves out."""
    return [t for i, (_, t) in enumerate(TURNS) if i not in targets]


@pytest.mark.parametrize("targets", [[0], [3], [0, 2], [1, 4]])
@pytest.mark.parametrize("call", ["find", "search", "find_many"])
def test_a_turn_target_carries_no_turn_outside_it(
    chat: Treehop, targets: list[int], call: str
) -> None:
    """Before: ``find("pottery workshop", target_uri=<turn-00000>)`` returned that turn with
    the session's four other turns in ``collapsed`` and ``slot_text`` (the bank pin of turn 3
    included): a scope naming one turn showed the whole conversation. Now a slot stops at a
    turn outside every target, as it stops at a turn the filters exclude."""
    uris = [_turn(i) for i in targets]
    q = "pottery workshop bowl marathon Saturday"
    if call == "find_many":
        results = chat.find_many([q, "what did you make"], target_uri=uris, limit=5)
    else:
        results = [getattr(chat, call)(q, target_uri=uris, limit=5)]
    assert results[0].contexts()
    for res in results:
        hits = res.contexts()
        assert all(m.uri in uris for m in hits)
        assert all(c.uri in uris for m in hits for c in m.collapsed)
        shown = "\n".join(m.slot_text for m in hits)
        assert [t for t in _outside_text(targets) if t in shown] == []


def test_an_assembled_block_of_a_turn_target_holds_that_turn_only(chat: Treehop) -> None:
    block = chat.assemble_context("pottery workshop", target_uri=_turn(0), max_tokens=2000)
    assert TURNS[0][1] in block.text
    assert [t for t in _outside_text([0]) if t in block.text] == []


def test_a_turn_target_on_a_remote_store_carries_no_turn_outside_it() -> None:
    """The same on a store that cannot read a session by order (VikingDB, over the fake
    service: the session is searched whole, the other path of the slot's growth)."""
    from test_vikingdb_store import AK, SK, make_store

    from fake_servers.vikingdb_server import FakeVikingDB

    with FakeVikingDB(ak=AK, sk=SK) as srv:
        store = make_store(srv, dim=BagOfWordsEmbedder.dimension)
        with Treehop(embedder=BagOfWordsEmbedder(), store=store, tagger=None) as c:
            c.add_messages(
                [{"speaker": s, "content": t} for s, t in TURNS],
                conversation_id="c1",
                session_id="s1",
                session_time="2024-03-01T10:00:00Z",
            )
            for targets in ([0], [3], [1, 3]):
                uris = [_turn(i) for i in targets]
                res = c.find("pottery workshop bowl Saturday", target_uri=uris, limit=5)
                hits = res.contexts()
                assert hits and all(m.uri in uris for m in hits)
                assert all(x.uri in uris for m in hits for x in m.collapsed)
            whole = c.find("pottery workshop", target_uri=SESSION, limit=3).contexts()[0]
            assert len(whole.collapsed) == 4  # (the control: the session's exchange)


def test_adjacent_turn_targets_and_the_session_target_keep_their_exchange(chat: Treehop) -> None:
    """The controls: two adjacent targeted turns share one slot, and the session (or the
    conversation) as the target still carries every turn of the exchange."""
    pair = chat.find("pottery workshop Saturday", target_uri=[_turn(0), _turn(1)], limit=5)
    assert [m.uri for m in pair.contexts()] == [_turn(0)]
    assert [c.uri for c in pair.contexts()[0].collapsed] == [_turn(1)]
    for scope in (SESSION, "viking://~/memories/conversations"):
        whole = chat.find("pottery workshop", target_uri=scope, limit=3).contexts()[0]
        assert whole.uri == _turn(0)
        assert [c.uri for c in whole.collapsed] == [_turn(i) for i in range(1, 5)]


# -- 2. the command line tells a missing session from a missing URI by type, not by text --------


def _cli_client(options: ClientOptions) -> Treehop:
    return Treehop(options.path, user=options.user, embedder=BagOfWordsEmbedder(), tagger=None)


@pytest.mark.parametrize(
    "uri",
    [
        "viking://resources/session-notes/missing.md",
        "viking://resources/no-session",
        "viking://~/memories/sessions",
    ],
)
def test_a_missing_uri_that_says_session_still_gets_the_tree_hint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], uri: str
) -> None:
    """Before: ``treehop read viking://resources/session-notes/missing.md`` printed no hint:
    the hint was left out when the error's text held the word "session" (meant for a
    missing session id), so any URI holding it lost the way to see what is there. The
    lead's 80e60c2 told the two apart by type in the MCP server; the command line now does
    too."""
    index = tmp_path / "index"
    with Treehop(index, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.remember("Run helm rollback.", name="rollback")
    code = main(["read", uri, "--index", str(index)], client_factory=_cli_client)
    _, err = capsys.readouterr()
    assert code == ExitCode.NOT_FOUND
    assert "see what is there with: treehop tree viking://resources" in err, err
    code = main(["session", "show", "0" * 32, "--index", str(index)], client_factory=_cli_client)
    _, err = capsys.readouterr()
    assert code == ExitCode.NOT_FOUND and "no session" in err
    assert "treehop tree" not in err, err  # (a session is not a URI: no tree hint)


# -- 3. unknown targets are named bounded --------------------------------------------------------


def test_unknown_targets_are_named_bounded(chat: Treehop) -> None:
    """Before: 100 unknown targets of 2,000 characters each (the most ``target_uri`` takes)
    raised a NotFoundError of 202,311 characters, every URI quoted whole (an MCP answer, a
    log line). Now the first ten are named, each to 200 characters, and the rest counted."""
    targets = [f"viking://resources/{'a' * 2000}{i:03d}" for i in range(100)]
    for call in ("find", "search"):
        with pytest.raises(NotFoundError) as err:
            getattr(chat, call)("pottery", target_uri=targets)
        text = str(err.value)
        assert len(text) < 3000, len(text)
        assert "and 90 more" in text and text.startswith("unknown target URI(s): viking://")
    with pytest.raises(NotFoundError, match=r"^unknown target URI\(s\): viking://resources/x$"):
        chat.find("pottery", target_uri="viking://resources/x")  # (one short URI: as before)


# -- 4. a context session id the ledger accepts is one the store can keep ------------------------


@pytest.mark.parametrize("sid", ["a..b", "thread..1", "x" * 60 + "..", "v1..2..3"])
def test_a_context_session_id_with_two_dots_is_refused_as_a_query_error(
    tmp_path: Path, sid: str
) -> None:
    """Before: ``assemble_context(q, session_id="a..b")`` passed the ledger's check (letters,
    digits, '_', '.', '-') and then failed in the store as ``StoreError: invalid state key
    'context/<user>/a..b'`` (a backend failure naming an internal key; the MCP ``context``
    tool said the same). Now it is an InvalidQueryError, raised before anything is read or
    written, naming the rule."""
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.remember("pottery workshop notes", name="n")
        with pytest.raises(InvalidQueryError, match=r"'\.\.'"):
            c.assemble_context("pottery", session_id=sid)
        ok = c.assemble_context("pottery", session_id="a.b")
        assert ok.uris and c.assemble_context("pottery", session_id="a.b").uris == []


@pytest.mark.parametrize("thread", ["user..1", "a..b", "run..", "x.y"])
def test_a_langgraph_thread_id_with_two_dots_still_dedups(tmp_path: Path, thread: str) -> None:
    """The middleware keeps a safe thread id as the session id (else a digest of it); a
    thread id holding '..' was kept, and every turn of that thread then failed with the
    store's StoreError. Such an id is now digested like any other unsafe one."""
    from langchain_treehop.middleware import session_for_thread

    sid = session_for_thread(thread)
    assert ".." not in sid
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.remember("pottery workshop notes", name="n")
        assert c.assemble_context("pottery", session_id=sid).uris
        assert c.assemble_context("pottery", session_id=sid).uris == []


def test_a_user_name_with_two_dots_keeps_a_context_ledger_of_its_own(tmp_path: Path) -> None:
    """User names may hold '..' (``john..doe``), but the ledger's key ``context/<user>/<id>``
    may not: every ``assemble_context(session_id=...)`` of such a user failed with the
    store's StoreError. Its key now names the user by a digest that no user name can spell
    (a key segment may start with '_', a user name may not); two users' ledgers stay apart."""
    index = tmp_path / "idx"
    for user in ("john..doe", "john.doe", "a..b..c"):
        with Treehop(index, embedder=BagOfWordsEmbedder(), tagger=None, user=user) as c:
            c.remember("pottery workshop notes", name="n")
            assert c.assemble_context("pottery", session_id="s1").uris, user
            assert c.assemble_context("pottery", session_id="s1").uris == [], user


# -- 5. find's context_type and target_uri together: the intersection, as search() -------------


@pytest.fixture
def mixed() -> Iterator[Treehop]:
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.remember("pottery notes of a workshop", name="n")
        c.add_resource("pottery resource text", target_uri="viking://resources/p.txt")
        yield c


NOTE = "viking://~/memories/notes/n"
PAGE = "viking://resources/p.txt"


def test_find_keeps_only_the_targets_of_its_context_type(mixed: Treehop) -> None:
    """Before: ``find(q, context_type="memory", target_uri=[<resource>, <memories>])``
    returned the resource too (find_many and the LangChain retriever's find mode the same),
    where ``search(context_types=["memory"])`` keeps the memory targets: the context type
    was dropped whenever targets were given. Now find narrows the targets to it."""
    targets = [PAGE, "viking://~/memories"]
    res = mixed.find("pottery", context_type="memory", target_uri=targets)
    assert [m.uri for m in res.contexts()] == [NOTE]
    batch = mixed.find_many(["pottery", "workshop"], context_type="memory", target_uri=targets)
    assert all(m.uri == NOTE for r in batch for m in r.contexts()) and batch[0].contexts()
    both = mixed.find("pottery", target_uri=targets).contexts()
    assert {m.uri for m in both} == {NOTE, PAGE}  # (the control: no context type, both)


@pytest.mark.parametrize("call", ["find", "find_many"])
def test_find_refuses_targets_outside_its_context_type_before_any_work(
    mixed: Treehop, call: str
) -> None:
    """No target of the context type: refused (as search() refuses it), not answered with
    the other type's hits, and before anything is embedded."""
    before = mixed.aio._embedder.calls
    with pytest.raises(InvalidQueryError, match="do not overlap"):
        if call == "find":
            mixed.find("pottery", context_type="memory", target_uri=PAGE)
        else:
            mixed.find_many(["pottery"], context_type="resource", target_uri=[NOTE])
    assert mixed.aio._embedder.calls == before
    mixed.find("pottery", context_type="memory", target_uri=NOTE)
    assert mixed.aio._embedder.calls > before  # (the counter counts a find's embedding)


def test_the_langchain_retriever_keeps_its_context_types_with_targets(mixed: Treehop) -> None:
    from langchain_treehop import TreehopRetriever

    r = TreehopRetriever(
        client=mixed, context_types=["memory"], target_uri=[PAGE, "viking://~/memories"]
    )
    assert [d.metadata["uri"] for d in r.invoke("pottery")] == [NOTE]


# -- 6. a vector store's target_uri stays under its base_uri ------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        "viking://resources/tenant-ab",  # a prefix sibling: another store's base
        "viking://resources",  # the base's parent
        "viking://~/memories",  # the user's memories (conversation turns)
        ["viking://resources/tenant-a/x.md", "viking://resources/tenant-ab"],
    ],
)
def test_a_vector_stores_target_outside_its_base_is_refused(target: object) -> None:
    """Before: ``TreehopVectorStore(base_uri=".../tenant-a").similarity_search(q,
    target_uri="viking://resources/tenant-ab")`` searched the other store's subtree and
    answered its passages (``viking://~/memories``: the user's conversation turns, as
    Documents), though its searches are "scoped to base_uri". Now a target outside the base
    is an InvalidQueryError, in LangChain's and LlamaIndex's stores alike; one under it
    (a ``viking://`` URI or a path) still narrows the search."""
    from llama_index.core.vector_stores.types import VectorStoreQuery

    from langchain_treehop import TreehopVectorStore
    from llama_index.vector_stores.treehop import TreehopVectorStore as LIStore

    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as th:
        a = TreehopVectorStore(client=th, base_uri="viking://resources/tenant-a")
        b = TreehopVectorStore(client=th, base_uri="viking://resources/tenant-ab")
        a.add_texts(["pottery of tenant a"], metadatas=[{"source": "x.md"}])
        b.add_texts(["pottery of tenant ab"], metadatas=[{"source": "y.md"}])
        th.remember("pottery note of the user", name="n")
        with pytest.raises(InvalidQueryError, match="base_uri"):
            a.similarity_search("pottery", k=5, target_uri=target)
        li = LIStore(client=th, base_uri="viking://resources/tenant-a")
        vec = BagOfWordsEmbedder().embed_query("pottery").tolist()
        with pytest.raises(InvalidQueryError, match="base_uri"):
            li.query(VectorStoreQuery(query_embedding=vec, similarity_top_k=5), target_uri=target)
        for inside in ("x.md", "viking://resources/tenant-a/x.md", "viking://resources/tenant-a"):
            docs = a.similarity_search("pottery", k=5, target_uri=inside)
            assert [d.page_content for d in docs] == ["pottery of tenant a"], inside


# -- 7. a damaged session of one user: no other user's call reads it --------------------------


def _damaged_alice() -> tuple[MemoryState, str, str]:
    """A state holding Alice's session whose first message's content was damaged into a
    dict holding her pin (another program, a bad restore), and Bob's session."""
    state = MemoryState()
    store = SessionStore(state)
    alice = store.create_session("alice")
    store.add_message(alice, "user", "my bank pin is 4321", user="alice")
    bob = store.create_session("bob")
    raw = json.loads(state.get_state(f"sessions/{alice}"))
    raw["messages"][0]["content"] = {"pin": "4321"}
    state.put_state(f"sessions/{alice}", json.dumps(raw).encode())
    return state, alice, bob


def test_another_users_damaged_session_reads_as_missing() -> None:
    """Before: Bob's ``get`` / ``delete`` / ``add_message`` / ``context_for_intent`` of
    Alice's damaged session raised IndexCorruptError quoting pydantic's error, whose
    ``input_value={'pin': '4321'}`` is Alice's text (and told her id exists: a missing id is
    SessionNotFoundError). Now it is SessionNotFoundError, word for word as a missing id."""
    state, alice, _ = _damaged_alice()
    bob = SessionStore(state).for_user("bob")
    missing = "f" * 32
    for call in (
        bob.get,
        bob.delete,
        bob.context_for_intent,
        lambda s: bob.add_message(s, "user", "hi"),
    ):
        with pytest.raises(SessionNotFoundError) as theirs:
            call(alice)
        with pytest.raises(SessionNotFoundError) as absent:
            call(missing)
        assert str(theirs.value).replace(alice, "X") == str(absent.value).replace(missing, "X")
    assert json.loads(state.get_state(f"sessions/{alice}"))["user"] == "alice"  # untouched


def test_a_damaged_session_does_not_break_another_users_listing() -> None:
    """Before: Bob's ``list_sessions()`` read every session and raised Alice's
    IndexCorruptError (her pin in it); his own sessions could not be listed at all."""
    state, _, bob_sid = _damaged_alice()
    bob = SessionStore(state).for_user("bob")
    assert [s.session_id for s in bob.list_sessions()] == [bob_sid]


def test_the_owner_is_told_the_session_is_damaged_without_its_text() -> None:
    """Alice is still told her session is unreadable (IndexCorruptError), naming the field
    and the problem, not the damaged value (the message went to logs and MCP answers)."""
    state, alice, _ = _damaged_alice()
    owner = SessionStore(state).for_user("alice")
    for call in (lambda: owner.get(alice), owner.list_sessions):
        with pytest.raises(IndexCorruptError) as err:
            call()
        text = str(err.value)
        assert "4321" not in text and "pin" not in text
        assert alice in text and "messages.0.content" in text


def test_a_session_deleted_by_another_process_leaves_the_listing_whole() -> None:
    """A store that listed a session another process then deleted raised that session's
    SessionNotFoundError from ``list_sessions()``; the listing now leaves it out."""
    state = MemoryState()
    first = SessionStore(state)
    a, b = first.create_session("ann"), first.create_session("ann")
    other = SessionStore(state)
    other.delete(a)
    reader = SessionStore(state)  # (its index lists both: read before the delete's update)
    reader._index = [a, b]
    assert [s.session_id for s in reader.list_sessions()] == [b]
    assert [s.session_id for s in reader.for_user("ann").list_sessions()] == [b]


_ID_TEXT = st.one_of(
    st.text(alphabet="ab.-_9", min_size=1, max_size=12),
    st.text(alphabet=st.sampled_from("ab.-_9Z/é \u202e"), max_size=70),
)
_USER = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,20}\Z")


@settings(max_examples=300, deadline=None)
@given(sid=_ID_TEXT, user=_USER, thread=_ID_TEXT)
@example(sid="a..b", user="u", thread="t")  # (the regressions, found rarely at random)
@example(sid="a", user="john..doe", thread="t")
@example(sid="a", user="u", thread="user..1")
def test_every_accepted_context_session_makes_a_state_key(sid: str, user: str, thread: str) -> None:
    """The property behind section 4: a session id the ledger accepts, for any valid user,
    is a key the stores accept (``check_state_key``), and the middleware's session of any
    thread id is one the ledger accepts."""
    from langchain_treehop.middleware import session_for_thread
    from treehop.context_assembly import ContextLedger
    from treehop.stores._state_blobs import check_state_key

    ledger = ContextLedger(MemoryState(), user)
    try:
        key = ledger._key(sid)
    except InvalidQueryError:
        pass
    else:
        check_state_key(key)
    ledger._key(session_for_thread(thread or "t"))


# -- 8. (held) the new filter ops answer alike in every store, on hostile values -------------

_VALUES: list[object] = [
    *("", [], None, 0, False, {}, ["", "x"], "İstanbul", "STRASSE", "straße", "a%b_c"),
    *("(.*)+", "[a-z]", "x" * 5000, "ǅ", 1.5, [1, 2], ["A%", "b"], "é", "e\u0301", True),
    *("null", [None], [[]], {"a": "x"}, "\\", "a'b\"c"),
]
_NEEDLES = ["%", "_", "a%b", ".*", "(.*)+", "[a-z]", "STRASSE", "ss", "i̇stanbul", "x", "é"]
_NEEDLES += ["\\", "'", '"', "null", "A"]


def _hostile_filters() -> list[dict[str, object]]:
    out: list[dict[str, object]] = [
        {"op": "empty", "field": "v"},
        {"op": "not_empty", "field": "v"},
        {
            "op": "or",
            "conds": [
                {"op": "empty", "field": "v"},
                {"op": "text_match", "field": "v", "value": "x"},
            ],
        },
        {
            "op": "and",
            "conds": [
                {"op": "not_empty", "field": "v"},
                {"op": "must_not", "field": "v", "conds": ["x"]},
            ],
        },
    ]
    for value in _NEEDLES:
        for op in ("text_match", "text_match_not"):
            for fold in (False, True):
                out.append({"op": op, "field": "v", "value": value, "ignore_case": fold})
    return out


def test_the_new_filter_ops_answer_alike_in_every_store(tmp_path: Path) -> None:
    """text_match(_not) / (not_)empty on values a remote engine could read otherwise (LIKE's
    ``%`` / ``_``, regex metacharacters, case folds that change length, empty lists and
    dicts, null, JSON-looking strings, 5,000 characters): the embedded store, Milvus (lite,
    real client) and VikingDB (the fake service) return exactly the DSL's matches (68
    filters x 28 leaves; held on 80e60c2 too: the remote stores evaluate these ops in
    Python, regex metacharacters are literal)."""
    import numpy as np
    from pymilvus import MilvusClient

    from test_vikingdb_store import AK, SK, make_store
    from treehop.filters import MetadataFilter
    from treehop.models import ContextType, Node
    from treehop.stores.base import Scope
    from treehop.stores.embedded import EmbeddedStore
    from treehop.stores.milvus import MilvusStore

    from fake_servers.vikingdb_server import FakeVikingDB

    root = "viking://resources/h"
    nodes = [
        Node(
            uri=root,
            context_type=ContextType.RESOURCE,
            is_leaf=False,
            abstract="r",
            level=1,
            parent_uri="viking://resources",
        )
    ]
    for i, v in enumerate([*_VALUES, "<missing>"]):
        md = {} if v == "<missing>" else {"v": v}
        nodes.append(
            Node(
                uri=f"{root}/n{i}.md",
                context_type=ContextType.RESOURCE,
                is_leaf=True,
                abstract=f"n{i}",
                level=2,
                parent_uri=root,
                metadata=md,
            )
        )
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(len(nodes), 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    milvus = MilvusClient(str(tmp_path / "m.db"))
    try:
        with FakeVikingDB(ak=AK, sk=SK) as srv:
            stores = {
                "embedded": EmbeddedStore(dimension=16),
                "milvus": MilvusStore(client=milvus, collection="hostile", dimension=16),
                "vikingdb": make_store(srv, dim=16),
            }
            for store in stores.values():
                store.upsert(nodes, vecs)
            for spec in _hostile_filters():
                md = MetadataFilter.parse(spec)
                assert md is not None
                want = sorted(n.uri for n in nodes if n.is_leaf and md.matches(n.metadata))
                for name, store in stores.items():
                    hits = store.search(vecs[3], Scope(metadata=md, leaves_only=True), 100)
                    assert sorted(h.node.uri for h in hits) == want, (name, spec)
    finally:
        milvus.close()
