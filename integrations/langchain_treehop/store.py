"""``TreehopStore``: LangGraph's long-term memory store (``BaseStore``) on a treehop tree.

A LangGraph namespace is a tuple — ``("users", user_id, "memories")`` — and a treehop tree is a
path, so the mapping is one-to-one::

    ("users", "u1", "memories"), key "diet"
        ->  viking://~/memories/store/users/u1/memories/@diet

- each namespace label is one URI segment; the item's key is the last segment, prefixed by
  ``@`` so that a key and a sub-namespace of the same name never collide;
- characters outside ``A-Za-z0-9_-`` are written as ``~`` + two hex digits per UTF-8 byte (and
  an empty string as a lone ``~``), a reversible escape that can never produce ``.``, ``..``,
  ``/`` or ``#``, which the URI rules reserve;
- the item is a leaf whose text is what LangGraph's ``index`` config says to embed (the whole
  value by default, or the given fields), so ``search(query=...)`` is treehop's tree search over
  the namespace's subtree; its value, key, namespace and times are the leaf's metadata.

Semantics follow :class:`langgraph.store.memory.InMemoryStore`, and the test suite checks that
differentially (the same random operation sequences on both): in one ``batch``, reads see the
state before the batch's writes, and the last write to a key wins; ``filter`` is the same
JSON-like matching (equality, nested dicts, ``$eq $ne $gt $gte $lt $lte``; two strings that
are not numbers compare as strings, as in LangGraph's Postgres store); items are listed in
(namespace, key) order when there is no query (or a blank one, ``"  "``); with a query, the
tree search ranks the indexed items and the rest of the matching items follow by cosine, then
the unindexed ones without a score. Every ranked item's ``score`` is the cosine of the query's
and the item's vectors (the scale of ``InMemoryStore`` and the Postgres store), whatever the
filter, ``limit`` or ``offset``; so an item the tree search ranks lower may score higher.
``list_namespaces`` lists namespaces that hold items. TTLs are not supported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from itertools import repeat
from typing import Any, Literal

import numpy as np
from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)
from langgraph.store.base.embed import get_text_at_path, tokenize_path

from treehop import AsyncTreehop, Node
from treehop import integration_kit as kit
from treehop import uri as urimod
from treehop.errors import (
    EmbeddingError,
    IndexCorruptError,
    InvalidQueryError,
    InvalidURIError,
    NotFoundError,
)
from treehop.integration_kit import TreehopClient
from treehop.memory import write_nodes
from treehop.models import ContextType, Level
from treehop.redaction import listed
from treehop.validation import MAX_LIMIT, shown_value

DEFAULT_ROOT = "viking://~/memories/store"
KIND = "store_item"
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def encode_label(label: str) -> str:
    """One namespace label or key as a URI segment (see the module docstring)."""
    if label == "":
        return "~"
    return "".join(
        ch if ch in _SAFE else "".join(f"~{b:02x}" for b in ch.encode("utf-8")) for ch in label
    )


def decode_label(segment: str) -> str:
    """The inverse of :func:`encode_label`."""
    if segment == "~":
        return ""
    out = bytearray()
    i = 0
    while i < len(segment):
        if segment[i] == "~":
            out.append(int(segment[i + 1 : i + 3], 16))
            i += 3
        else:
            out.extend(segment[i].encode())
            i += 1
    return out.decode("utf-8")


class InvalidStoreNamespaceError(InvalidQueryError, InvalidNamespaceError):
    """A namespace LangGraph refuses (an empty label, a ``.`` or NUL in one, the reserved root
    ``langgraph``): treehop's typed error and LangGraph's own ``InvalidNamespaceError`` at once,
    so that code catching either keeps working."""


def _check_text(value: object, what: str) -> str:
    """A string that is valid Unicode (a lone surrogate cannot be stored or encoded)."""
    if not isinstance(value, str):
        raise InvalidQueryError(f"{what} must be a string, got {type(value).__name__}")
    if any("\ud800" <= ch <= "\udfff" for ch in value):
        raise InvalidQueryError(f"{what} contains a lone surrogate (not valid Unicode text)")
    return value


def _check_labels(labels: object, what: str) -> tuple[str, ...]:
    """A namespace (or a prefix, a condition's path): a tuple or list of valid strings,
    then LangGraph's own label rules (as :class:`InvalidStoreNamespaceError`)."""
    if not isinstance(labels, (tuple, list)):
        raise InvalidQueryError(f"{what} must be a tuple of strings, got {type(labels).__name__}")
    for i, label in enumerate(labels):
        if not isinstance(label, str):  # LangGraph's own rule: InvalidNamespaceError there too
            raise InvalidStoreNamespaceError(
                f"Invalid namespace label at position {i} of {what}: namespace labels must be "
                f"strings, but got {type(label).__name__}."
            )
    out = tuple(_check_text(label, f"a label of {what}") for label in labels)
    try:
        validate_op_namespace(GetOp(out, ""))
    except InvalidNamespaceError as exc:
        raise InvalidStoreNamespaceError(str(exc)) from None
    return out


def _check_count(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidQueryError(f"{what} must be an integer >= 0, got {shown_value(value)}")
    return value


def _check_op(op: Op) -> None:
    """One operation of a batch, whole, before anything is read or written: only typed errors
    leave the store (a ``limit="5"`` was a ``TypeError``, ``filter=1`` an ``AttributeError``,
    a lone surrogate a ``UnicodeEncodeError``)."""
    if isinstance(op, GetOp):
        _check_labels(op.namespace, "namespace")
        _check_text(op.key, "key")
    elif isinstance(op, SearchOp):
        _check_labels(op.namespace_prefix, "namespace_prefix")
        if op.query is not None:
            _check_text(op.query, "query")
        if op.filter is not None and not (
            isinstance(op.filter, dict) and all(isinstance(k, str) for k in op.filter)
        ):
            raise InvalidQueryError("filter must be a dict with string keys")
        _check_count(op.limit, "limit")
        _check_count(op.offset, "offset")
    elif isinstance(op, ListNamespacesOp):
        for cond in op.match_conditions or ():
            if not isinstance(cond, MatchCondition):
                raise InvalidQueryError("match_conditions must be MatchCondition objects")
            if not isinstance(cond.path, (tuple, list)):
                raise InvalidQueryError("a match condition's path must be a tuple of strings")
            for label in cond.path:
                _check_text(label, "a match condition's label")
        if op.max_depth is not None:
            _check_count(op.max_depth, "max_depth")
        _check_count(op.limit, "limit")
        _check_count(op.offset, "offset")
    elif isinstance(op, PutOp):
        _check_labels(op.namespace, "namespace")
        _check_text(op.key, "key")
        index = op.index
        if index is not None and index is not False and not _is_str_list(index):
            raise InvalidQueryError("index must be False, None or a list of field paths")
    else:
        raise InvalidQueryError(f"unknown store operation {type(op).__name__}")


def _is_str_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(f, str) for f in value)


def _dt(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=UTC)


def compare_values(item_value: Any, filter_value: Any) -> bool:
    """LangGraph's filter matching: equality, nested objects, lists, ``$`` operators."""
    if isinstance(filter_value, dict):
        # (a non-string key is no operator: ``k.startswith`` raised AttributeError for it, and
        # a stored JSON object, whose keys are strings, never matches it)
        if any(isinstance(k, str) and k.startswith("$") for k in filter_value):
            return all(_apply(item_value, op, v) for op, v in filter_value.items())
        if not isinstance(item_value, dict):
            return False
        return all(compare_values(item_value.get(k), v) for k, v in filter_value.items())
    if isinstance(filter_value, (list, tuple)):
        return (
            isinstance(item_value, (list, tuple))
            and len(item_value) == len(filter_value)
            and all(compare_values(i, f) for i, f in zip(item_value, filter_value, strict=True))
        )
    return bool(item_value == filter_value)


def _apply(value: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(value == operand)
    if op == "$ne":
        return bool(value != operand)
    if op in {"$gt", "$gte", "$lt", "$lte"}:
        a: Any
        b: Any
        try:
            a, b = float(value), float(operand)
        except (TypeError, ValueError, OverflowError):  # (an int past float's range)
            # Two strings that are not numbers compare as strings, as LangGraph's Postgres
            # store compares JSON strings. Why: a value is JSON, so the docs tell users to
            # store a datetime as its ISO text, and ``{"date": {"$gte": "2024-01-01"}}`` then
            # matched nothing, silently (InMemoryStore raises ValueError there). Anything
            # else that is not two numbers (a string against a number, null) never matches.
            if not (isinstance(value, str) and isinstance(operand, str)):
                return False
            a, b = value, operand
        return bool({"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op])
    raise InvalidQueryError(f"unsupported filter operator {op!r} ($eq $ne $gt $gte $lt $lte)")


def matches_condition(cond: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """A namespace against a prefix/suffix condition (``*`` matches any one label)."""
    path = tuple(cond.path)
    if len(namespace) < len(path):
        return False
    if cond.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif cond.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise InvalidQueryError(f"unsupported match type {cond.match_type!r} (prefix, suffix)")
    return all(p == "*" or k == p for k, p in pairs)


class TreehopStore(BaseStore):
    """LangGraph ``BaseStore`` over a treehop client (see the module docstring).

    Args:
        client: a ``Treehop`` or ``AsyncTreehop``; both ``batch`` and ``abatch`` work with either.
        root: where namespaces live (default ``viking://~/memories/store``: the client user's
            memories, so ``search()`` and the agent tools find them too).
        index_fields: the value fields embedded by default (LangGraph's ``index["fields"]``
            syntax: ``"text"``, ``"a.b"``, ``"items[*].text"``; ``"$"``, the default, is the
            whole value as JSON). A put's own ``index=[...]`` overrides them, ``index=False``
            stores the item unindexed.
        index: LangGraph's ``IndexConfig`` spelling, as ``InMemoryStore(index={...})`` and
            ``PostgresStore`` take it, so a store swapped in keeps its arguments: ``fields``
            (the same as ``index_fields``), ``dims`` (checked against the client's embedder)
            and ``embed`` (must be the client's own model: a ``TreehopEmbeddings`` of its
            embedder, or the LangChain ``Embeddings`` its ``LangChainEmbedder`` wraps; an
            index has one vector space, so another model is refused, not used beside it).
    """

    supports_ttl: bool = False

    def __init__(
        self,
        client: TreehopClient,
        *,
        root: str = DEFAULT_ROOT,
        index_fields: Sequence[str] | None = None,
        index: Mapping[str, Any] | None = None,
    ) -> None:
        self.client = kit.check_client(client)
        aio = kit.as_async(self.client)
        if index is not None:
            index_fields = _index_config_fields(aio, index, index_fields)
        resolved = aio.resolve(root)
        if urimod.context_type_of(resolved) is not ContextType.MEMORY:
            raise InvalidURIError(f"the store root must be under viking://~/memories, not {root}")
        if urimod.CHUNK_MARK in resolved:
            raise InvalidURIError("the store root cannot be a chunk URI")
        self.root = resolved
        if index_fields is not None and (
            isinstance(index_fields, str | bytes) or not isinstance(index_fields, Iterable)
        ):  # (a str was read as its characters: ``"text"`` embedded fields t, e, x, t)
            raise InvalidQueryError("index_fields must be a non-empty list of field paths")
        fields = list(index_fields) if index_fields is not None else ["$"]
        if not fields or not all(isinstance(f, str) and f for f in fields):
            raise InvalidQueryError("index_fields must be a non-empty list of field paths")
        self.index_fields = fields

    def __repr__(self) -> str:
        """The client and the namespace root, as the vector store shows its client. Why:
        ``BaseStore``'s default printed an object address, and a graph's store in a log said
        nothing of which index or user it wrote to (the client's repr holds no secret)."""
        return (
            f"TreehopStore(root={self.root!r}, index_fields={self.index_fields!r}, "
            f"client={self.client!r})"
        )

    # -------------------------------------------------------------------- public calls
    # LangGraph's BaseStore checks namespace labels itself before it batches, raising its own
    # InvalidNamespaceError (or a TypeError on a label that is not a string). These overrides
    # check the arguments first, so that what leaves the store is always a TreehopError (for
    # a refused namespace one that is also an InvalidNamespaceError), then defer to it.
    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        _check_labels(namespace, "namespace")
        return super().get(namespace, _check_text(key, "key"), refresh_ttl=refresh_ttl)

    async def aget(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        _check_labels(namespace, "namespace")
        return await super().aget(namespace, _check_text(key, "key"), refresh_ttl=refresh_ttl)

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        _check_labels(namespace_prefix, "namespace_prefix")
        return super().search(
            namespace_prefix,
            query=query,
            filter=filter,
            limit=limit,
            offset=offset,
            refresh_ttl=refresh_ttl,
        )

    async def asearch(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        _check_labels(namespace_prefix, "namespace_prefix")
        return await super().asearch(
            namespace_prefix,
            query=query,
            filter=filter,
            limit=limit,
            offset=offset,
            refresh_ttl=refresh_ttl,
        )

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        self._check_put_args(namespace, key)
        super().put(namespace, key, value, index, ttl=ttl)

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        self._check_put_args(namespace, key)
        await super().aput(namespace, key, value, index, ttl=ttl)

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        _check_labels(namespace, "namespace")
        super().delete(namespace, _check_text(key, "key"))

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        _check_labels(namespace, "namespace")
        await super().adelete(namespace, _check_text(key, "key"))

    def list_namespaces(
        self,
        *,
        prefix: tuple[str, ...] | None = None,
        suffix: tuple[str, ...] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        _check_affixes(prefix, suffix)
        return super().list_namespaces(
            prefix=prefix, suffix=suffix, max_depth=max_depth, limit=limit, offset=offset
        )

    async def alist_namespaces(
        self,
        *,
        prefix: tuple[str, ...] | None = None,
        suffix: tuple[str, ...] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        _check_affixes(prefix, suffix)
        return await super().alist_namespaces(
            prefix=prefix, suffix=suffix, max_depth=max_depth, limit=limit, offset=offset
        )

    @staticmethod
    def _check_put_args(namespace: object, key: object) -> None:
        ns = _check_labels(namespace, "namespace")
        if not ns:
            raise InvalidStoreNamespaceError("Namespace cannot be empty.")
        if ns[0] == "langgraph":
            raise InvalidStoreNamespaceError(
                f'Root label for namespace cannot be "langgraph". Got: {ns}'
            )
        _check_text(key, "key")

    # -------------------------------------------------------------------- URIs
    def namespace_uri(self, namespace: tuple[str, ...]) -> str:
        return "/".join([self.root, *(encode_label(label) for label in namespace)])

    def item_uri(self, namespace: tuple[str, ...], key: str) -> str:
        return f"{self.namespace_uri(namespace)}/@{encode_label(key)}"

    def _locate(self, uri: str) -> tuple[tuple[str, ...], str]:
        rest = uri[len(self.root) + 1 :].split("/")
        return tuple(decode_label(s) for s in rest[:-1]), decode_label(rest[-1][1:])

    # -------------------------------------------------------------------- batch
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return kit.run_on(self.client, self.abatch(ops))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        try:
            ops = list(ops)
        except TypeError as exc:
            raise InvalidQueryError(f"ops must be an iterable of operations: {exc}") from None
        for op in ops:
            _check_op(op)
            if isinstance(op, PutOp):
                self._check_put(op)
        aio = kit.as_async(self.client)
        # Each op reads what it needs (every read before the first write, so reads see the
        # state before the batch's writes): a get its item, a put the item it replaces, a
        # search its namespace's subtree; only ``list_namespaces`` reads every item. Why:
        # every batch parsed the whole store first, so a get on 16,000 items took 63 ms.
        everything = (
            await aio._io(self._items, self.root)
            if any(isinstance(op, ListNamespacesOp) for op in ops)
            else None
        )
        named = [
            self.item_uri(tuple(op.namespace), op.key)
            for op in ops
            if isinstance(op, GetOp | PutOp)
        ]
        items = everything if everything is not None else await aio._io(self._items_at, named)
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                node = items.get(self.item_uri(tuple(op.namespace), op.key))
                results.append(self._item(node) if node is not None else None)
            elif isinstance(op, SearchOp):
                scope = self.namespace_uri(tuple(op.namespace_prefix))
                under = everything
                if under is None:
                    under = await aio._io(self._items, scope)
                results.append(await self._search(aio, op, under))
            elif isinstance(op, ListNamespacesOp):
                assert everything is not None
                results.append(self._list_namespaces(op, everything))
            elif isinstance(op, PutOp):
                puts[(tuple(op.namespace), op.key)] = op
                results.append(None)
            else:
                raise InvalidQueryError(f"unknown store operation {type(op).__name__}")
        if puts:
            await self._apply_puts(aio, list(puts.values()), items)
        return results

    # -------------------------------------------------------------------- reads
    def _items(self, subtree: str) -> dict[str, Node]:
        return {
            n.uri: n
            for n in self._store_of().iter_nodes(subtree)
            if n.is_leaf and n.metadata.get("kind") == KIND and n.uri != subtree
        }

    def _items_at(self, uris: Sequence[str]) -> dict[str, Node]:
        """:meth:`_items` of the given item URIs only (one lookup, no subtree read)."""
        found = self._store_of().get(list(dict.fromkeys(uris))) if uris else []
        return {
            n.uri: n
            for n in found
            if n is not None and n.is_leaf and n.metadata.get("kind") == KIND
        }

    def _store_of(self) -> Any:
        return kit.as_async(self.client).store

    def _item(self, node: Node) -> Item:
        md = node.metadata
        ns, key = self._locate(node.uri)
        try:
            created, updated = _dt(float(md["created_at"])), _dt(float(md["updated_at"]))
        except (KeyError, TypeError, ValueError, OverflowError):
            raise _unreadable(node, "created_at / updated_at") from None
        return Item(
            value=_stored_value(node),
            key=key,
            namespace=ns,
            created_at=created,
            updated_at=updated,
        )

    def _search_item(self, node: Node, score: float | None) -> SearchItem:
        it = self._item(node)
        return SearchItem(
            namespace=it.namespace,
            key=it.key,
            value=it.value,
            created_at=it.created_at,
            updated_at=it.updated_at,
            score=score,
        )

    async def _search(
        self, aio: AsyncTreehop, op: SearchOp, items: Mapping[str, Node]
    ) -> list[SearchItem]:
        if op.limit < 0 or op.offset < 0:
            raise InvalidQueryError("limit and offset must be >= 0")
        scope = self.namespace_uri(tuple(op.namespace_prefix))
        matching = [
            n
            for uri, n in items.items()
            if urimod.is_within(uri, scope)
            and (
                not op.filter
                or all(compare_values(_stored_value(n).get(k), v) for k, v in op.filter.items())
            )
        ]
        matching.sort(key=lambda n: self._locate(n.uri))
        if not op.query or not op.query.strip():
            # A blank query (a form's empty field, "  ") says nothing to rank by: listed as
            # no query is. (LangGraph's InMemoryStore lists for ""/None and embeds "  ",
            # ranking every item by a vector of whitespace; the core refuses a blank query.)
            return [self._search_item(n, None) for n in matching[op.offset : op.offset + op.limit]]
        indexed = [n for n in matching if n.metadata.get("indexed", True)]
        unindexed = [n for n in matching if not n.metadata.get("indexed", True)]
        ranked: list[tuple[Node, float]] = []
        if indexed:
            by_uri = {n.uri: n for n in indexed}
            try:
                res = await aio.find(
                    op.query,
                    target_uri=scope,
                    limit=min(MAX_LIMIT, max(1, op.offset + op.limit)),
                    include_directories=False,
                    collapse_chunks=False,
                )
            except NotFoundError:
                res = None
            seen: set[str] = set()
            for m in res.contexts() if res is not None else []:
                uri = aio.resolve(m.uri)
                if uri in by_uri and uri not in seen:
                    seen.add(uri)
                    ranked.append((by_uri[uri], 0.0))
            rest = [n for n in indexed if n.uri not in seen]
            if len(ranked) >= op.offset + op.limit:
                rest = []
            # Every ranked item's score is one scale: the cosine of the query's and the
            # item's stored vectors (InMemoryStore's); the tree search ranks the first ones,
            # the rest follow by cosine. Why (helper leftovers74): the tree search's own
            # scores were shown for its hits and the cosine for the rest, two scales in one
            # list (a filter moves items from one to the other), and the tree search's score
            # of an item changed with ``limit`` / ``offset`` (its pool): the same item
            # scored 0.637 on one page and 0.616 on the next.
            uris = [n.uri for n, _ in ranked] + [n.uri for n in rest]
            if uris:
                qv = np.asarray(await aio.embedder.aembed_query(op.query), dtype=np.float32)
                vecs = np.asarray(
                    await aio._io(self._store_of().get_vectors, uris), dtype=np.float32
                )
                # (both sides at unit length, a zero vector scoring 0: an embedder that does
                # not normalise, Ollama's or a Hugging Face model's, is stored and queried as
                # it returns its vectors, and scored 664.3 for a cosine of 0.664, 0.0007 at
                # length 0.001; helper attacks88)
                qn = float(np.linalg.norm(qv))
                norms = np.linalg.norm(vecs, axis=1) * qn
                scores = (vecs @ qv) / np.where(norms > 0, norms, 1.0)
                ranked = [(n, float(c)) for (n, _), c in zip(ranked, scores, strict=False)]
                tail = scores[len(ranked) :]
                ranked.extend((rest[i], float(tail[i])) for i in np.argsort(-tail, kind="stable"))
        page = ranked[op.offset : op.offset + op.limit]
        out = [self._search_item(n, s) for n, s in page]
        if len(out) < op.limit:
            skip = max(0, op.offset - len(ranked))
            out.extend(
                self._search_item(n, None) for n in unindexed[skip : skip + op.limit - len(out)]
            )
        return out

    def _list_namespaces(
        self, op: ListNamespacesOp, items: Mapping[str, Node]
    ) -> list[tuple[str, ...]]:
        spaces = {self._locate(uri)[0] for uri in items}
        if op.match_conditions:
            spaces = {
                ns for ns in spaces if all(matches_condition(c, ns) for c in op.match_conditions)
            }
        if op.max_depth is not None:
            spaces = {ns[: op.max_depth] for ns in spaces}
        return sorted(spaces)[op.offset : op.offset + op.limit]

    # -------------------------------------------------------------------- writes
    def _check_put(self, op: PutOp) -> None:
        ns = tuple(op.namespace)
        if not ns or not all(isinstance(label, str) and label for label in ns):
            raise InvalidQueryError(
                f"namespace must be a non-empty tuple of non-empty strings: {ns}"
            )
        if not isinstance(op.key, str):
            raise InvalidQueryError("key must be a string")
        if op.value is not None and not isinstance(op.value, dict):
            raise InvalidQueryError("value must be a dict (or None to delete)")
        uri = self.item_uri(ns, op.key)
        if len(uri) > urimod.MAX_URI_LENGTH:
            raise InvalidQueryError(
                f"namespace and key too long: their URI would exceed {urimod.MAX_URI_LENGTH} "
                "characters"
            )
        # (a URI's segments: a 1,000-label namespace raised RecursionError out of the write,
        # one of 300 was written deeper than any URI argument may name)
        if urimod.segment_count(uri) > urimod.MAX_URI_DEPTH:
            raise InvalidQueryError(
                f"namespace too deep: its item's URI would have more than "
                f"{urimod.MAX_URI_DEPTH} segments (treehop.uri.MAX_URI_DEPTH)"
            )
        if op.ttl is not None:
            raise InvalidQueryError("TreehopStore does not support ttl")
        if op.value is not None:
            try:
                # (sort_keys only to refuse a dict mixing int and str keys, typed: they would
                # collide as JSON strings; the write keeps the value's key order)
                json.dumps(op.value, ensure_ascii=False, sort_keys=True).encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidQueryError(
                    "value contains a lone surrogate (not valid Unicode text)"
                ) from None
            except (TypeError, ValueError, RecursionError) as exc:
                raise InvalidQueryError(f"value must be JSON-serialisable: {exc}") from None

    def _fields(self, index: Literal[False] | list[str] | None) -> list[str] | None:
        """The value fields a put embeds: its own ``index``, else the store's; None when
        ``index=False``."""
        if index is False:
            return None
        return self.index_fields if index is None else list(index)

    def _text(
        self, value: Mapping[str, Any], index: Literal[False] | list[str] | None
    ) -> str | None:
        fields = self._fields(index)
        if fields is None:
            return None
        texts: list[str] = []
        for f in fields:
            texts.extend(get_text_at_path(value, f if f == "$" else tokenize_path(f)))
        return "\n".join(t for t in texts if t.strip()) or None

    async def _apply_puts(
        self, aio: AsyncTreehop, puts: Sequence[PutOp], items: Mapping[str, Node]
    ) -> None:
        now = datetime.now(UTC).timestamp()
        nodes: list[Node] = []
        delete: list[str] = []
        for op in puts:
            ns = tuple(op.namespace)
            uri = self.item_uri(ns, op.key)
            old = items.get(uri)
            if op.value is None:
                if old is not None:
                    delete.append(uri)
                continue
            # (insertion order, as InMemoryStore answers a value; json.loads keeps it)
            value_json = json.dumps(op.value, ensure_ascii=False)
            text = self._text(op.value, op.index)
            body = text if text is not None else value_json
            # The abstract (what the namespace directory's abstract and overview are made
            # from, and what a result shows): the same fields, read as text (see value_text).
            fields = self._fields(op.index) if text is not None else None
            shown = value_text(op.value, fields or ["$"]) or body
            created = float(old.metadata["created_at"]) if old is not None else now
            nodes.append(
                Node(
                    uri=uri,
                    parent_uri=self.namespace_uri(ns),
                    context_type=ContextType.MEMORY,
                    level=Level.CONTENT,
                    is_leaf=True,
                    abstract=" ".join(shown.split())[:ABSTRACT_CHARS],
                    content=body,
                    metadata={
                        "kind": KIND,
                        "name": op.key,
                        "store_namespace": list(ns),
                        "store_key": op.key,
                        "store_value": value_json,
                        "indexed": text is not None,
                        "created_at": created,
                        "updated_at": now,
                        "timestamp": now,
                    },
                )
            )
        if nodes or delete:
            await write_nodes(aio, nodes, delete=delete, prune_below=self.root)


_INDEX_KEYS = ("dims", "embed", "fields")


def _index_config_fields(
    aio: AsyncTreehop, index: object, index_fields: Sequence[str] | None
) -> Sequence[str] | None:
    """The embedded fields of LangGraph's ``index={"dims", "embed", "fields"}``, after
    checking that ``dims`` and ``embed`` describe the client's own embedder (a user moving
    from ``InMemoryStore(index=...)`` met a raw ``TypeError``; an ``embed`` that is not the
    client's would silently search one vector space with queries from another)."""
    if not isinstance(index, Mapping):
        raise InvalidQueryError(
            f"index must be a dict like LangGraph's IndexConfig, got {type(index).__name__}"
        )
    unknown = [k for k in index if k not in _INDEX_KEYS]
    if unknown:
        raise InvalidQueryError(
            f"index: unknown key(s) [{listed(unknown)}]; TreehopStore reads "
            f"{', '.join(_INDEX_KEYS)} "
            "(the tree search has no ANN or distance settings to choose)"
        )
    embedder = aio.embedder
    dims = index.get("dims")
    if dims is not None:
        if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
            raise InvalidQueryError(
                f"index['dims'] must be a positive integer, got {shown_value(dims)}"
            )
        known = getattr(embedder, "dimension", 0)
        if known and known != dims:
            raise EmbeddingError(
                f"index['dims'] is {dims}, but the client's embedder {embedder.name!r} gives "
                f"{known}-dimensional vectors; an index has one vector space: to embed with "
                "your model, open the client with Treehop(path, "
                "embedder=LangChainEmbedder(your_embeddings)) and pass the same embeddings "
                "here, or leave 'dims' and 'embed' out"
            )
    embed = index.get("embed")
    if embed is not None and not _is_client_model(embedder, embed):
        raise InvalidQueryError(
            f"index['embed'] ({type(embed).__name__}) is not the client's embedder "
            f"({embedder.name!r}); an index has one vector space: open the client with "
            "Treehop(path, embedder=LangChainEmbedder(your_embeddings)) and pass the same "
            "embeddings here, or leave 'embed' out"
        )
    if "fields" in index:
        if index_fields is not None:
            raise InvalidQueryError("give index_fields or index['fields'], not both")
        return index["fields"]  # type: ignore[no-any-return]
    return index_fields


def _is_client_model(embedder: object, embed: object) -> bool:
    """Whether ``embed`` (LangGraph's ``index["embed"]``) is the model ``embedder`` runs."""
    if embed is embedder or getattr(embedder, "embeddings", None) is embed:
        return True
    inner = getattr(embed, "embedder", None)  # a TreehopEmbeddings
    return inner is embedder or (
        inner is not None and getattr(inner, "name", None) == getattr(embedder, "name", "")
    )


ABSTRACT_CHARS = 300
_SHOWN_CHARS = ABSTRACT_CHARS * 4 + 64
"""Characters of an item's value read as text for its abstract (its first 300 characters,
whitespace collapsed): a bound, so a large value costs no more than a small one."""


def select_at_path(obj: Any, path: str) -> list[Any]:
    """The objects LangGraph's ``get_text_at_path(obj, path)`` turns into texts, unconverted:
    the same path syntax (``a.b``, ``[0]``, ``[-1]``, ``[*]``, ``*``, ``{a,b.c}``, ``$``) and
    the same walk, so an object selected here is exactly one text there (a scalar's ``str``, a
    list's or dict's JSON), and None where it drops one."""
    if isinstance(obj, Mapping) and not isinstance(obj, dict):
        obj = dict(obj)
    if not path or path == "$":
        return [obj]
    tokens = tokenize_path(path)

    def walk(o: Any, pos: int) -> list[Any]:
        if pos >= len(tokens):
            return [o] if isinstance(o, (str, int, float, bool, list, dict)) else []
        token = tokens[pos]
        out: list[Any] = []
        if token.startswith("[") and token.endswith("]"):
            if not isinstance(o, list):
                return []
            index = token[1:-1]
            if index == "*":
                for x in o:
                    out.extend(walk(x, pos + 1))
            else:
                try:
                    i = int(index)
                except ValueError:
                    return []
                i = len(o) + i if i < 0 else i
                if 0 <= i < len(o):
                    out.extend(walk(o[i], pos + 1))
        elif token.startswith("{") and token.endswith("}"):
            if not isinstance(o, dict):
                return []
            for field in (f.strip() for f in token[1:-1].split(",")):
                names = tokenize_path(field)
                if not names:
                    continue
                cur: Any = o
                for name in names:
                    if isinstance(cur, dict) and name in cur:
                        cur = cur[name]
                    else:
                        cur = None
                        break
                if isinstance(cur, (str, int, float, bool, list, dict)):
                    out.append(cur)
        elif token == "*":
            if isinstance(o, (dict, list)):
                for x in o.values() if isinstance(o, dict) else o:
                    out.extend(walk(x, pos + 1))
        elif isinstance(o, dict) and token in o:
            out.extend(walk(o[token], pos + 1))
        return out

    return walk(obj, 0)


def _key_text(entry: tuple[Any, Any]) -> str:
    """A dict entry's sort key: its key as JSON writes it (a str, or an int's digits)."""
    return str(entry[0])


def value_text(value: Any, fields: Sequence[str], limit: int = _SHOWN_CHARS) -> str:
    """An item's indexed fields as plain text: what its abstract (and so its namespace
    directory's abstract and overview) is made from.

    The fields are those the item is embedded by (``index_fields`` or the put's ``index``;
    ``["$"]``, the whole value, by default), selected as LangGraph selects them
    (:func:`select_at_path`); a selected string or number is its text, as LangGraph embeds
    it; a selected object or list is read as ``name = value`` entries (nested names
    dotted, a list's scalars after one name, comma-separated) in JSON's sorted key order,
    instead of its JSON. Why: the abstract was the embedded text cut at 300 characters, and
    with ``"$"`` that is the value's JSON, so a namespace of ``{"text": ...}`` items was
    described as ``memories: {"text"; {"text"; ...`` (a directory's abstract keeps what
    precedes a colon in its first children's abstracts) and its overview's lines were JSON:
    braces and quotes in what the directory's vector is made from and what a result shows.
    ``name = value`` has no colon, so that part is the item's own words.

    Entries are joined with ``"; "``. At most ``limit`` characters are produced (the abstract
    keeps 300). The value is walked depth first with a stack of iterators, so a depth of
    hundreds is no recursion, and a name is built only when its entry is reached and cut at
    ``limit`` (a 500-deep chain of long keys made names of quadratic total length): past the
    selection (as LangGraph's), the work is bounded by the output and the objects' own key
    sorting, not by their whole size."""
    out: list[str] = []
    size = 0
    for field in fields:
        for selected in select_at_path(value, field):
            name_before: str | None = None
            stack: list[tuple[str, Iterator[tuple[Any, Any]]]] = [("", iter([(None, selected)]))]
            while stack and size < limit:
                prefix, entries = stack[-1]
                entry = next(entries, None)
                if entry is None:
                    stack.pop()
                    continue
                key, o = entry
                name = prefix if key is None else (f"{prefix}.{key}" if prefix else str(key))
                name = name[:limit]
                if isinstance(o, dict):
                    stack.append((name, iter(sorted(o.items(), key=_key_text))))
                elif isinstance(o, list):
                    stack.append((name, zip(repeat(None), o)))
                elif isinstance(o, (str, int, float, bool)):
                    try:
                        text = str(o)
                    except ValueError:  # (an int past str()'s digit limit: not JSON-stored)
                        continue
                    if not text.strip():
                        continue
                    if name and name == name_before:
                        sep = ", "  # the next scalar of the same list
                    else:
                        sep = ("; " if out else "") + (f"{name} = " if name else "")
                    name_before = name
                    piece = (sep + text)[: limit - size]
                    out.append(piece)
                    size += len(piece)
            if size >= limit:
                return "".join(out)
    return "".join(out)


def _check_affixes(prefix: object, suffix: object) -> None:
    for what, labels in (("prefix", prefix), ("suffix", suffix)):
        if labels is not None:
            if not isinstance(labels, (tuple, list)):
                raise InvalidQueryError(f"{what} must be a tuple of strings")
            for label in labels:
                _check_text(label, f"a label of {what}")
            if labels:
                _check_labels([x for x in labels if x != "*"], what)


__all__ = [
    "InvalidStoreNamespaceError",
    "TreehopStore",
    "decode_label",
    "encode_label",
    "select_at_path",
    "value_text",
]


def _unreadable(node: Node, what: str) -> IndexCorruptError:
    return IndexCorruptError(
        f"{node.uri[:200]} is a store item this store cannot read ({what}): a node put under "
        "the store's root with kind 'store_item' metadata by another writer"
    )


def _stored_value(node: Node) -> Any:
    """An item's value; :class:`IndexCorruptError` where its ``store_value`` is not the
    JSON object this store writes. Why: a node under the root with ``kind: store_item``
    metadata that the store did not write (a program's own ``remember`` / ``add_resource``)
    escaped a raw ``TypeError`` / ``JSONDecodeError`` / ``RecursionError`` from ``get`` and
    ``search``."""
    raw = node.metadata.get("store_value")
    try:
        value = json.loads(raw) if isinstance(raw, str) else None
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, dict):
        raise _unreadable(node, "store_value")
    return value
