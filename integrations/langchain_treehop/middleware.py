"""``TreehopContextMiddleware``: retrieval-augmented context for LangChain 1.x agents.

Before every model call of an agent run, the middleware takes the latest user message, asks
treehop for a token-budgeted context block (:meth:`treehop.AsyncTreehop.assemble_context`:
the tree search, tiers content → overview → abstract, per-type quotas) and appends it to the
system message of *that call only* — the agent's state, and so its checkpointed history, keeps
the conversation as the user wrote it.

Why per call rather than once in ``before_model``: an agent calls the model several times per
user turn (after each tool result). The block is assembled once per user turn and reused for
the turn's later calls, so a tool loop neither re-runs the search nor loses the context.

Across turns the agent's thread id (``config["configurable"]["thread_id"]``) is the treehop
session of :class:`treehop.context_assembly.ContextLedger`: what an earlier turn injected is not
injected again (it is still in the conversation). With ``record_turns=True`` the finished
turn — the user message and the agent's final answer — is stored through the memory write path
(:meth:`treehop.AsyncTreehop.add_messages`) as a session of conversation ``conversation_id``,
so later threads can recall it.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from treehop import AsyncTreehop
from treehop import integration_kit as kit
from treehop.context_assembly import TIERS, AssembledContext, Tier, check_budget
from treehop.errors import InvalidQueryError, NotFoundError
from treehop.integration_kit import TreehopClient
from treehop.memory import ROLE_ALIASES, check_id
from treehop.search_options import SearchKwargs
from treehop.validation import check_limit

DEFAULT_HEADER = (
    "Context retrieved from the knowledge tree for the user's latest message. Each section is "
    "headed by its source in brackets ([name]): cite it when you use it; ignore sections that "
    "do not help."
)
"""The line before the block. Why not "headed by its viking:// URI" (its earlier wording): the
block's headers are compact names (``[FAQ]``, ``[conv/session, day time]``: the full URI cost
20-40 tokens a document, :data:`treehop.context_assembly.COMPACT_RESOURCE_HEADERS`), so the
model was told to cite URIs the block never showed; the URIs stay in the assembled
context's ``sections``."""
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
_CACHE_SIZE = 256


def _text_of(message: BaseMessage) -> str:
    return message.text.strip() if hasattr(message, "text") else str(message.content).strip()


def _said_by(message: BaseMessage, role: str) -> bool:
    """Whether ``message`` is a ``role`` turn (``user`` / ``assistant``): its class, or a
    ``ChatMessage`` whose role LangChain reads so (``human`` / ``ai`` mapped).

    Why: a ``ChatMessage(role="user")`` (or ``"human"``) is the user's turn to LangChain and
    to :meth:`treehop.AsyncTreehop.add_messages`; the middleware looked for ``HumanMessage``
    only, so such a turn got no context and was not recorded (left open by leftovers61)."""
    if isinstance(message, HumanMessage):
        return role == "user"
    if isinstance(message, AIMessage):
        return role == "assistant"
    if isinstance(message, ChatMessage) and isinstance(message.role, str):
        return ROLE_ALIASES.get(message.role, message.role) == role
    return False


def latest_user_message(messages: Sequence[BaseMessage]) -> BaseMessage | None:
    """The last user message of the conversation (a ``HumanMessage``, or a ``ChatMessage``
    whose role is ``user`` / ``human``), if any."""
    for m in reversed(messages):
        if _said_by(m, "user"):
            return m
    return None


def _thread_id() -> str | None:
    try:
        cfg = get_config()
    except RuntimeError:  # called outside a graph run
        return None
    tid = (cfg.get("configurable") or {}).get("thread_id")
    return None if tid is None else str(tid)


def session_for_thread(thread_id: str) -> str:
    """A thread id as a treehop session id: itself when it is a safe id, else a digest
    (one holding '..' too: the ledger's state key may not hold it)."""
    if _SAFE_ID.match(thread_id) and ".." not in thread_id:
        return thread_id
    # (surrogatepass: a thread id holding a lone surrogate raised UnicodeEncodeError)
    return "t-" + hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class TreehopContextMiddleware(AgentMiddleware):
    """Inject treehop context for the latest user turn into each model call.

    Args:
        client: a ``Treehop`` or ``AsyncTreehop``.
        max_tokens: the token budget of the injected block (counted by treehop's tokenizer).
            ``0`` injects nothing, as ``k=0`` does (no budget, no block: a caller computing the
            budget from what the model has left reaches it); negative is refused.
        quotas: per-context-type token budgets (``{"memory": 400}``).
        tiers: which node texts may be shown (content, overview, abstract).
        k: how many hits ``find()`` retrieves to fill the budget from. ``0`` injects nothing
            (no ``find()``; the model call goes on unchanged; ``record_turns`` still records),
            as a LangChain retriever with ``k=0`` returns ``[]`` (``VectorStoreRetriever``
            and :class:`~langchain_treehop.TreehopRetriever` alike).
        find_kwargs: more ``find()`` arguments (``target_uri``, ``filter``, ``since``, ...).
        dedup_across_turns: leave out what an earlier turn of the same thread injected.
        record_turns: store each finished turn (user message, final answer) as memory.
        conversation_id: the conversation recorded turns go to (one session per thread).
        header: the line that introduces the block in the system message.
        token_counter: as for :func:`treehop.context_assembly.assemble_context`.
    """

    def __init__(
        self,
        client: TreehopClient,
        *,
        max_tokens: int = 1500,
        quotas: Mapping[str, int] | None = None,
        tiers: Sequence[Tier] = TIERS,
        k: int = 10,
        find_kwargs: SearchKwargs | None = None,
        dedup_across_turns: bool = True,
        record_turns: bool = False,
        conversation_id: str = "agent",
        header: str = DEFAULT_HEADER,
        token_counter: Any = None,
    ) -> None:
        super().__init__()
        self.client = kit.check_client(client)
        # 0: no block, as k=0 (a budget of nothing); the quotas and tiers are still checked,
        # against the smallest budget assemble_context takes. Negative, bool, float refused.
        no_budget = max_tokens == 0 and type(max_tokens) is int
        check_budget(1 if no_budget else max_tokens, quotas, tiers)
        check_id(conversation_id, "conversation_id")
        # 0: retrieve nothing, as LangChain retrievers read k=0; negative, bool, float refused.
        self.k = 0 if k == 0 and type(k) is int else check_limit(k, "k")
        self.find_kwargs: SearchKwargs = {**(find_kwargs or {})}
        if "limit" in self.find_kwargs:
            raise InvalidQueryError("set the number of hits with k=, not find_kwargs['limit']")
        self.max_tokens, self.tiers = max_tokens, tuple(tiers)
        self.quotas = dict(quotas) if quotas else None
        self.dedup_across_turns = dedup_across_turns
        self.record_turns = record_turns
        self.conversation_id = conversation_id
        self.header = header
        self.token_counter = token_counter
        self._cache: OrderedDict[tuple[str | None, str], AssembledContext] = OrderedDict()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ helpers
    def _turn_key(self, request: ModelRequest) -> tuple[str | None, str, str] | None:
        """(session, cache key, query) for the request's latest user message."""
        human = latest_user_message(request.messages)
        if human is None:
            return None
        # (a surrogate, a NUL or a text past the query limit made the run raise)
        query = kit.memory_query(_text_of(human))
        if not query:
            return None
        tid = _thread_id()
        session = session_for_thread(tid) if tid is not None else None
        ident = human.id or hashlib.sha256(query.encode("utf-8")).hexdigest()
        return session, ident, query

    def _cached(self, session: str | None, ident: str) -> AssembledContext | None:
        with self._lock:
            hit = self._cache.get((session, ident))
            if hit is not None:
                self._cache.move_to_end((session, ident))
            return hit

    def _remember(self, session: str | None, ident: str, ctx: AssembledContext) -> None:
        with self._lock:
            self._cache[(session, ident)] = ctx
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)

    def _assemble_kwargs(self, session: str | None) -> dict[str, Any]:
        return {
            "max_tokens": self.max_tokens,
            "quotas": self.quotas,
            "tiers": self.tiers,
            "session_id": session if self.dedup_across_turns else None,
            "token_counter": self.token_counter,
            "limit": self.k,
            **self.find_kwargs,
        }

    def _with_context(self, request: ModelRequest, ctx: AssembledContext) -> ModelRequest:
        if not ctx.text:
            return request
        block = f"{self.header}\n\n{ctx.text}"
        old = request.system_message
        text = f"{_text_of(old)}\n\n{block}" if old is not None and _text_of(old) else block
        return request.override(system_message=SystemMessage(content=text))

    # ------------------------------------------------------------------ hooks
    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        key = self._turn_key(request)
        if key is None:
            return handler(request)
        session, ident, query = key
        if self.k == 0 or self.max_tokens == 0:  # (after the latest message's checks)
            return handler(request)
        ctx = self._cached(session, ident)
        if ctx is None:
            try:
                ctx = kit.call(
                    self.client,
                    AsyncTreehop.assemble_context,
                    query,
                    **self._assemble_kwargs(session),
                )
            except NotFoundError:  # the scope does not exist yet (a fresh index): no context
                return handler(request)
            self._remember(session, ident, ctx)
        return handler(self._with_context(request, ctx))

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        key = self._turn_key(request)
        if key is None:
            return await handler(request)
        session, ident, query = key
        if self.k == 0 or self.max_tokens == 0:  # (after the latest message's checks)
            return await handler(request)
        ctx = self._cached(session, ident)
        if ctx is None:
            try:
                ctx = await kit.acall(
                    self.client,
                    AsyncTreehop.assemble_context,
                    query,
                    **self._assemble_kwargs(session),
                )
            except NotFoundError:  # the scope does not exist yet (a fresh index): no context
                return await handler(request)
            self._remember(session, ident, ctx)
        return await handler(self._with_context(request, ctx))

    def _turn_messages(self, state: AgentState) -> list[dict[str, Any]] | None:
        messages: Sequence[BaseMessage] = state.get("messages", [])
        human_at = max((i for i, m in enumerate(messages) if _said_by(m, "user")), default=-1)
        if human_at < 0:
            return None
        answer = next(
            (
                m
                for m in reversed(messages[human_at + 1 :])
                if _said_by(m, "assistant") and _text_of(m) and not getattr(m, "tool_calls", None)
            ),
            None,
        )
        question = _text_of(messages[human_at])
        if not question:
            return None
        # (a long text as several turns, a lone surrogate as U+FFFD: kit.memory_turns)
        out = kit.memory_turns("user", question)
        if answer is not None:
            out += kit.memory_turns("assistant", _text_of(answer))
        return out or None

    def _record_kwargs(self) -> dict[str, Any]:
        tid = _thread_id()
        session = session_for_thread(tid) if tid is not None else None
        return {"conversation_id": self.conversation_id, "session_id": session}

    def after_agent(self, state: AgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        if self.record_turns:
            turn = self._turn_messages(state)
            if turn:
                kit.call(self.client, AsyncTreehop.add_messages, turn, **self._record_kwargs())
        return None

    async def aafter_agent(self, state: AgentState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        if self.record_turns:
            turn = self._turn_messages(state)
            if turn:
                await kit.acall(
                    self.client, AsyncTreehop.add_messages, turn, **self._record_kwargs()
                )
        return None


__all__ = ["TreehopContextMiddleware", "latest_user_message", "session_for_thread"]
