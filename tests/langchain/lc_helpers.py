"""Test doubles and helpers for the LangChain integration tests (offline, deterministic).

Everything here is deterministic and offline. ``WordHashEmbeddings`` is a LangChain
``Embeddings`` (so the tests also exercise :class:`LangChainEmbedder`): each word maps to a
fixed random direction, so texts that share words are close. ``ScriptedChatModel`` is
LangChain's ``GenericFakeChatModel`` that also accepts ``bind_tools`` (agents bind their tools)
and records the messages it was sent.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import Field

from treehop import AsyncTreehop, Treehop

SAMPLE_TREE = Path(__file__).resolve().parents[2] / "retrieval" / "treehop" / "sample_tree"
_WORD = re.compile(r"[\w-]+")
DIM = 64


def word_vector(text: str) -> list[float]:
    out = np.zeros(DIM)
    for w in _WORD.findall(text.lower()):
        seed = int.from_bytes(hashlib.md5(w.encode()).digest()[:4], "little")
        out += np.random.default_rng(seed).standard_normal(DIM)
    # Deliberately not normalised: the adapter must normalise.
    return [float(x) * 3.0 for x in out]


class WordHashEmbeddings(Embeddings):
    """A deterministic LangChain embedding model that counts its calls."""

    def __init__(self) -> None:
        self.sync_calls = 0
        self.async_calls = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.sync_calls += 1
        return [word_vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.sync_calls += 1
        return word_vector(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        self.async_calls += 1
        return [word_vector(t) for t in texts]

    async def aembed_query(self, text: str) -> list[float]:
        self.async_calls += 1
        return word_vector(text)


class SlowAsyncEmbeddings(WordHashEmbeddings):
    """Async queries take ``delay_s`` of *awaiting*; the sync query path is forbidden."""

    def __init__(self, delay_s: float = 0.3) -> None:
        super().__init__()
        self.delay_s = delay_s
        self.forbid_sync_query = False

    def embed_query(self, text: str) -> list[float]:
        if self.forbid_sync_query:
            raise AssertionError("the sync embedding path was used from async code")
        return super().embed_query(text)

    async def aembed_query(self, text: str) -> list[float]:
        await asyncio.sleep(self.delay_s)
        return await super().aembed_query(text)


class ScriptedChatModel(GenericFakeChatModel):
    """Replays scripted AI messages; accepts tools; records every prompt it received."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)
    seen_kwargs: list[dict[str, Any]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: Any = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        self.seen_kwargs.append(dict(kwargs))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def load_sample_tree(client: Treehop, root: Path = SAMPLE_TREE) -> None:
    """Resources as ``viking://resources/<topic>``, memories and skills in the user space."""
    for d in sorted((root / "resources").iterdir()):
        tags = "ops" if d.name in {"devops", "security"} else None
        client.add_resource(str(d), target_uri=f"viking://resources/{d.name}", tags=tags)
    for f in sorted((root / "memories").iterdir()):
        client.add_resource(str(f), target_uri=f"viking://~/memories/{f.stem}")
    for d in sorted((root / "skills").iterdir()):
        client.add_resource(str(d), target_uri=f"viking://~/skills/{d.name}")


async def aload_sample_tree(client: AsyncTreehop, root: Path = SAMPLE_TREE) -> None:
    for d in sorted((root / "resources").iterdir()):
        tags = "ops" if d.name in {"devops", "security"} else None
        await client.add_resource(str(d), target_uri=f"viking://resources/{d.name}", tags=tags)
    for f in sorted((root / "memories").iterdir()):
        await client.add_resource(str(f), target_uri=f"viking://~/memories/{f.stem}")
    for d in sorted((root / "skills").iterdir()):
        await client.add_resource(str(d), target_uri=f"viking://~/skills/{d.name}")


def count_context_calls(monkeypatch: Any) -> list[str]:
    """Patch ``AsyncTreehop.assemble_context`` (for one test, through ``monkeypatch``) to
    record each query it is called with; the list it returns fills as the middleware runs.
    Why: "injects nothing" and "once per turn" are claims about how many searches ran."""
    calls: list[str] = []
    original = AsyncTreehop.assemble_context

    async def counting(self: AsyncTreehop, query: Any, **kw: Any) -> Any:
        calls.append(query)
        return await original(self, query, **kw)

    monkeypatch.setattr(AsyncTreehop, "assemble_context", counting)
    return calls
