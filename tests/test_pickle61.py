"""The OpenAI-compatible LLM and embedder pickle (stop 61): ``pickle.dumps`` raised a raw
``TypeError`` ("cannot pickle '_thread.lock' object"), so a chain, an agent or an index
shipped to a worker process (multiprocessing, a cache) could not take them along. The copy
opens its own pools, talks to a fake server over loopback HTTP with the same key, and a new
process that unpickles one knows the key as a secret to redact."""

from __future__ import annotations

import asyncio
import copy
import pickle
from pathlib import Path

import httpx
import pytest

from treehop.embedders.openai_compatible import OpenAICompatibleEmbedder
from treehop.errors import UnsupportedUseError
from treehop.llm import ChatMessage, OpenAICompatibleLLM

from fake_servers.openai_api import FakeOpenAIServer
from treehop_test_doubles import redaction_in_a_new_process

KEY = "plainkey61zzqq"  # (no recognisable key shape: only registration redacts it)
MSGS = [ChatMessage(role="user", content="hi")]


def _last_auth(srv: FakeOpenAIServer) -> str:
    return srv.requests[-1].headers["authorization"]


def test_a_pickled_llm_answers_with_the_same_key_on_its_own_pools() -> None:
    with FakeOpenAIServer("pickled answer") as srv:
        llm = OpenAICompatibleLLM("m", base_url=srv.base_url, api_key=KEY)
        assert llm.complete(MSGS) == "pickled answer"  # (a pool and a lock in use)
        for again in (pickle.loads(pickle.dumps(llm)), copy.deepcopy(llm)):
            assert again._client is None and again._lock is not llm._lock
            assert repr(again) == repr(llm) and KEY not in repr(again)
            assert again.complete(MSGS) == "pickled answer"
            assert _last_auth(srv) == f"Bearer {KEY}"
            assert asyncio.run(again.acomplete(MSGS)) == "pickled answer"
            assert again._client is not llm._client
            again.close()
        assert llm.complete(MSGS) == "pickled answer"  # (the original untouched)
        llm.close()


def test_a_pickled_embedder_embeds_alike_on_its_own_pools() -> None:
    with FakeOpenAIServer() as srv:
        e = OpenAICompatibleEmbedder(model="m", base_url=srv.base_url, api_key=KEY)
        want = e.embed(["kubernetes rollback", "pottery"])
        c = pickle.loads(pickle.dumps(e))
        assert c._client is None and c._lock is not e._lock and KEY not in repr(c)
        assert (c.embed(["kubernetes rollback", "pottery"]) == want).all()
        assert _last_auth(srv) == f"Bearer {KEY}"
        assert (asyncio.run(c.aembed(["pottery"]))[0] == want[1]).all()
        e.close()  # (closing the original leaves the copy working)
        assert (c.embed(["pottery"])[0] == want[1]).all()
        c.close()


def test_an_embedder_on_a_callers_client_is_refused_by_name() -> None:
    mine = httpx.Client()
    try:
        e = OpenAICompatibleEmbedder(model="m", base_url="http://127.0.0.1:9/v1", http_client=mine)
        with pytest.raises(UnsupportedUseError, match="http_client"):
            pickle.dumps(e)
        assert copy.deepcopy(e)._client is mine  # (deepcopy shares it, as before)
    finally:
        mine.close()


def test_a_new_process_that_unpickles_one_redacts_its_key(tmp_path: Path) -> None:
    """A secret is redacted where it is registered; a new process's registry is empty, so
    unpickling registers the key (and a URL's credentials) again."""
    llm = OpenAICompatibleLLM("m", base_url="http://127.0.0.1:9/v1", api_key=KEY)
    before, after = redaction_in_a_new_process(llm, KEY, tmp_path)
    assert before == f"echo {KEY}"  # (the control: not recognisable unregistered)
    assert KEY not in after and after.startswith("echo ")
