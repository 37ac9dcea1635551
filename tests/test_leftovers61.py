"""Items left open by stop 60 (bench/README.md, "Leftovers, stop 61 (helper leftovers61)").
Each test fails on 99b45f6 (main before this round)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import ChatMessage
from langchain_core.messages.utils import _create_message_from_message_type

from treehop import InvalidQueryError, Treehop

from treehop_test_doubles import indexed_kb

# LangChain's own reading of a role string (langchain_core.messages.utils
# _create_message_from_message_type, behind convert_to_messages): the message type it builds
LC_ROLES = ["human", "user", "ai", "assistant", "system", "developer", "tool", "function"]
# a LangChain message's type as treehop stores it (a FunctionMessage is a tool's result)
LC_TYPE_TO_TREEHOP = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "tool",
}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    with indexed_kb(tmp_path) as th:
        yield th


def _roles(th: Treehop, uris: list[str]) -> list[str]:
    return [th.stat(uri).metadata["role"] for uri in uris]


@pytest.mark.parametrize("role", LC_ROLES)
def test_langchain_chat_message_roles_map_as_langchain_reads_them(
    client: Treehop, role: str
) -> None:
    # 99b45f6: ChatMessage(role="human") / "ai" / "developer" / "function" was refused ("role
    # must be one of user, assistant, system, tool"), though LangChain itself reads these roles
    # as a HumanMessage, an AIMessage, a SystemMessage, a FunctionMessage
    extra = (
        {"tool_call_id": "c1"} if role == "tool" else {"name": "f"} if role == "function" else {}
    )
    lc = _create_message_from_message_type(role, "The sister lives in Lisbon.", **extra)
    expected = LC_TYPE_TO_TREEHOP[lc.type]
    res = client.add_messages(
        [ChatMessage(role=role, content="The sister lives in Lisbon.")], conversation_id="c"
    )
    assert _roles(client, res.turn_uris) == [expected]
    # a mapping with the same role reads the same (as convert_to_messages reads a dict)
    res = client.add_messages([{"role": role, "content": "Hello."}], conversation_id="d")
    assert _roles(client, res.turn_uris) == [expected]


@pytest.mark.parametrize("role", ["bot", "Human", "critic", 3])
def test_an_unknown_role_is_refused_naming_it(client: Treehop, role: object) -> None:
    nodes = len(client.store)
    with pytest.raises(InvalidQueryError, match=r"messages\[1\]: role .*is not one of") as ei:
        client.add_messages(
            [{"content": "hi"}, {"role": role, "content": "Hello."}], conversation_id="x"
        )
    assert repr(role) in str(ei.value) if isinstance(role, str) else "int" in str(ei.value)
    assert len(client.store) == nodes  # nothing written
