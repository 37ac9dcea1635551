"""Two users on one index: no path by which ``bob`` reads, uses or deletes ``alice``'s things.

Alice stores a private memory (with a PIN), a skill, a long chunked memory and a session that
mentions the PIN; resources are shared. Then a client opened for Bob tries every public
path: find / search (every mode, context type, tag filter, metadata filter, chunk
neighbours, tag hops), ls / read / tree / stat / set_tags / remove on Alice's URIs, every
session operation with Alice's session id, both integrations and the CLI. The PIN and
Alice's private words must appear nowhere in what Bob gets, and Alice's data must be intact
afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from treehop import Treehop
from treehop.cli import ClientOptions, main
from treehop.errors import InvalidURIError, NotFoundError, TreehopError
from treehop.models import FindResult

from treehop_test_doubles import BagOfWordsEmbedder

# Not digits alone: a secret of digits could appear inside any float of a payload (a timing).
PIN = "4321-kiwi"
SECRET_WORD = "zanzibarquokka"
ALICE_MEMORY = f"My bank pin is {PIN}. Banking {SECRET_WORD} details kept private."
ALICE_LONG = "\n\n".join(
    f"Paragraph {i} of the {SECRET_WORD} diary mentions banking and kubernetes pods."
    for i in range(40)
)


def _bow_client(path: Path, user: str) -> Treehop:
    return Treehop(path, user=user, embedder=BagOfWordsEmbedder(), tagger=None)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    path = tmp_path_factory.mktemp("two-users") / "idx"
    alice = _bow_client(path, "alice")
    alice.add_resource(
        "Kubernetes pods and banking services run in the shared cluster.",
        target_uri="viking://resources/cluster",
        tags="banking;shared-tag",
        metadata={"owner": "ops"},
    )
    alice.add_memory(ALICE_MEMORY, name="bank", tags="banking;shared-tag")
    alice.add_resource(
        ALICE_LONG,
        target_uri="viking://~/memories/diary",
        tags="shared-tag",
        metadata={"owner": "ops"},
        is_text=True,
    )
    alice.add_skill(f"# Transfer money\n\nUse pin {PIN} and {SECRET_WORD}.", name="transfer")
    sid = alice.create_session()
    alice.add_message(sid, "user", f"remember my bank pin is {PIN}")
    alice.close()
    return {"path": path, "alice_session": sid}


@pytest.fixture
def bob(shared: dict[str, Any]) -> Iterator[Treehop]:
    client = _bow_client(shared["path"], "bob")
    yield client
    client.close()


ALICE_URIS = [
    "viking://user/alice/memories",
    "viking://user/alice/memories/bank",
    "viking://user/alice/memories/diary",
    "viking://user/alice/memories/diary#chunk-0",
    "viking://user/alice/skills/transfer",
    "viking://user/alice",
]


def assert_nothing_of_alice(payload: str) -> None:
    assert PIN not in payload
    assert SECRET_WORD not in payload
    assert "user/alice" not in payload


def dump(result: FindResult) -> str:
    return result.model_dump_json()


FIND_VARIANTS: list[dict[str, Any]] = [
    {},
    {"mode": "thinking"},
    {"context_type": "memory"},
    {"context_type": "skill"},
    {"tags": "banking"},
    {"tags_all": ["banking", "shared-tag"]},
    {"tags": "shared-tag", "limit": 50},
    {"filter": {"op": "must", "field": "owner", "conds": ["ops"]}},
    {"chunk_diffusion_count": 5, "limit": 50},
    {"chunk_group": True, "limit": 50},
    {"include_directories": True, "explain": True, "limit": 100, "score_threshold": -1.0},
]


@pytest.mark.parametrize("kwargs", FIND_VARIANTS)
def test_find_and_search_never_return_another_users_context(
    bob: Treehop, kwargs: dict[str, Any]
) -> None:
    # Queries use Alice's words but never the checked secrets (results echo their queries).
    for query in ("bank pin", "diary paragraph banking kubernetes", "transfer money pin"):
        assert_nothing_of_alice(dump(bob.find(query, **kwargs)))
        search_kwargs = dict(kwargs)
        ct = search_kwargs.pop("context_type", None)
        if ct is not None:
            search_kwargs["context_types"] = [ct]
        assert_nothing_of_alice(dump(bob.search(query, **search_kwargs)))


@pytest.mark.parametrize("uri", ALICE_URIS)
def test_alices_uris_are_refused_everywhere(bob: Treehop, uri: str) -> None:
    calls = [
        lambda: bob.find("bank pin", target_uri=uri),
        lambda: bob.search("bank pin", target_uri=uri),
        lambda: bob.ls(uri),
        lambda: bob.read(uri),
        lambda: bob.tree(uri),
        lambda: bob.stat(uri),
        lambda: bob.set_tags(uri, add="stolen"),
        lambda: bob.remove(uri),
        lambda: bob.retag(uri),
    ]
    for call in calls:
        with pytest.raises(InvalidURIError):
            call()


def test_bobs_own_space_does_not_show_alices(bob: Treehop) -> None:
    for uri in ("viking://~/memories", "viking://~/skills"):
        try:
            entries = bob.ls(uri)
        except NotFoundError:
            continue
        assert_nothing_of_alice(json.dumps([e.__dict__ for e in entries]))
    assert_nothing_of_alice(json.dumps(bob.tree("viking://resources", depth=10)))


def test_sessions_of_another_user_look_exactly_like_missing_ones(
    bob: Treehop, shared: dict[str, Any]
) -> None:
    sid = shared["alice_session"]
    missing = "0" * 32
    calls = [
        ("get", lambda s: bob.get_session(s)),
        ("delete", lambda s: bob.delete_session(s)),
        ("add", lambda s: bob.add_message(s, "user", "hi")),
        ("search", lambda s: bob.search("bank pin", session_id=s)),
        ("view-get", lambda s: bob.aio.sessions.get(s)),
        ("view-context", lambda s: bob.aio.sessions.context_for_intent(s)),
    ]
    for name, call in calls:
        with pytest.raises(NotFoundError) as theirs:
            call(sid)
        with pytest.raises(NotFoundError) as absent:
            call(missing)
        # The same message shape: no oracle telling Bob that the id exists.
        assert str(theirs.value).replace(sid, "ID") == str(absent.value).replace(missing, "ID"), (
            name
        )
    assert bob.list_sessions() == []
    assert bob.aio.sessions.list_sessions() == []
    assert bob.aio.sessions.list_sessions(user="alice") == []
    with pytest.raises(TreehopError):
        bob.aio.sessions.create_session("alice")


def test_alice_is_intact_after_bobs_attempts(bob: Treehop, shared: dict[str, Any]) -> None:
    for attempt in (
        lambda: bob.delete_session(shared["alice_session"]),
        lambda: bob.remove("viking://user/alice/memories/bank"),
    ):
        with pytest.raises(TreehopError):
            attempt()
    bob.close()
    alice = _bow_client(shared["path"], "alice")
    try:
        assert PIN in alice.read("viking://~/memories/bank")
        session = alice.get_session(shared["alice_session"])
        assert PIN in session.messages[0].content
        assert [s.session_id for s in alice.list_sessions()] == [shared["alice_session"]]
        assert PIN in dump(alice.find("bank pin", context_type="memory"))
    finally:
        alice.close()


def test_langchain_retriever_sees_only_its_users_context(
    bob: Treehop, shared: dict[str, Any]
) -> None:
    from langchain_treehop import TreehopRetriever

    retriever = TreehopRetriever(client=bob, k=50)
    for query in ("bank pin", "diary paragraph banking"):
        docs = retriever.invoke(query)
        payload = json.dumps([[d.page_content, d.metadata] for d in docs], default=str)
        assert_nothing_of_alice(payload)
        docs = retriever.invoke(query, mode="search", context_types=["memory", "skill"])
        assert_nothing_of_alice(json.dumps([d.page_content for d in docs]))
    with pytest.raises(TreehopError):
        retriever.invoke("bank pin", target_uri="viking://user/alice/memories")
    with pytest.raises(TreehopError):
        retriever.invoke("bank pin", mode="search", session_id=shared["alice_session"])


def test_llamaindex_retriever_sees_only_its_users_context(bob: Treehop) -> None:
    from llama_index.retrievers.treehop import TreehopRetriever

    retriever = TreehopRetriever(bob, similarity_top_k=50)
    nodes = retriever.retrieve("bank pin diary paragraph")
    payload = json.dumps([[n.node.get_content(), n.node.metadata] for n in nodes], default=str)
    assert_nothing_of_alice(payload)
    with pytest.raises(TreehopError):
        TreehopRetriever(bob, target_uri="viking://user/alice/memories").retrieve("bank pin")


def test_cli_as_bob_sees_nothing_of_alice(
    shared: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    def factory(options: ClientOptions) -> Treehop:
        return Treehop(options.path, user=options.user, embedder=BagOfWordsEmbedder(), tagger=None)

    base = ["--index", str(shared["path"]), "--user", "bob"]
    for argv in (
        ["find", "bank pin", "--json"],
        ["find", "diary paragraph banking", "--json"],
        ["search", "bank pin", "--json"],
        ["session", "list", "--json"],
        ["tree", "viking://resources", "--json"],
    ):
        main([argv[0], *base, *argv[1:]], client_factory=factory)
        out, err = capsys.readouterr()
        assert_nothing_of_alice(out + err)
    for argv in (
        ["read", "viking://user/alice/memories/bank"],
        ["session", "show", shared["alice_session"]],
        ["ls", "viking://user/alice/memories"],
    ):
        code = main([argv[0], *base, *argv[1:]], client_factory=factory)
        out, err = capsys.readouterr()
        assert code != 0
        # The error may repeat the URI Bob typed, never anything stored under it.
        assert PIN not in out + err and SECRET_WORD not in out + err


def test_tag_hops_never_cross_into_another_users_space(shared: dict[str, Any]) -> None:
    """Alice's memory shares a tag with a shared resource: a hop must not follow it to her."""
    from treehop.config import RetrievalConfig, TagHopTrigger

    config = RetrievalConfig(tag_hop_trigger=TagHopTrigger.ALWAYS, tag_hop_max_subtrees=20)
    bob = Treehop(
        shared["path"], user="bob", embedder=BagOfWordsEmbedder(), tagger=None, config=config
    )
    try:
        for query in ("kubernetes pods banking cluster", "bank pin"):
            result = bob.find(query, limit=50, tags="shared-tag")
            assert result.query_results[0].tag_hops is not None
            assert_nothing_of_alice(dump(result))
            assert_nothing_of_alice(dump(bob.search(query, limit=50)))
    finally:
        bob.close()
