"""A store on VikingDB's vector-collection API (data plane V2), through the official SDK.

Why VikingDB: it is the engine the seed design names, it runs as a managed service that many
processes and users can read at once, and its filter DSL (``must`` / ``must_not`` / ``range`` /
``and`` / ``or``) is the one :mod:`treehop.filters` already speaks. The retriever sees only the
store protocol; every scope it asks for becomes a server-side filter on scalar-indexed fields:

==========================  ===============================================================
scope                       filter (all fields scalar-indexed)
==========================  ===============================================================
children of X               ``must parent_key [key(X)]``
inside subtree X            ``or(must node_key [key(X)], must ancestor_keys [key(X)])``
tags any-of / all-of        ``must tag_labels [...]`` / ``and`` of one ``must`` per label
context type, level, leaf   ``must context_type`` / ``must level`` / ``must is_leaf``
excluded URIs               ``must_not node_key [...]``
metadata filter             declared ``m_<field>`` columns, else evaluated client-side
==========================  ===============================================================

Keys, not URIs: VikingDB caps string fields at a few hundred bytes and list fields at a few
dozen items, while URIs are up to 2048 characters. Every URI is therefore stored as a fixed
32-hex-digit BLAKE2b key (the primary key ``id`` and the ``node_key`` / ``parent_key`` /
``ancestor_keys`` filter fields); the full node (URI, texts, tags, metadata) travels as JSON in
the ``node`` text field. ``ancestor_keys`` holds the keys of every proper prefix of the URI that
ends at a ``/`` or ``#`` boundary, which is the embedded store's subtree rule.
:func:`collection_schema` returns the fields and index settings to create the collection with.

Metadata: VikingDB has no JSON column, so a metadata field is filterable server-side only when
it is *declared* (``metadata_fields={"lang": "string", "year": "int64"}``): it is then written to
a typed ``m_<field>`` column, and ``md_present`` lists which declared fields a node has, so that
"field missing" keeps the filter DSL's meaning (VikingDB would otherwise fill in a default value
that a ``must`` could match). A filter on an undeclared field is still exact: it is evaluated in
Python on the nodes the rest of the scope selects and the search is restricted to the matching
keys -- a scan per distinct filter (cached), so declare the fields you filter on.

Traversal (``Scope.traversal`` with a tag/metadata filter) needs directories that *contain* a
match: one scan collects the ``ancestor_keys`` of every match, and the search admits ``filter or
(is_leaf and node_key in those keys)``. Derived key sets are cached per filter for
``filter_cache_ttl_s`` and dropped on any write through this store.

Consistency: VikingDB's collection is read-your-writes (``fetch_in_collection``), its index is
not (the service documents ~10-20 s before a write is searchable). Treehop's ingest reads a
subtree right after writing it (to summarise ancestors), so this store keeps every node it wrote
in the last ``consistency_window_s`` seconds in a local overlay and merges it into every index
read (search, children, scans, counts): the overlay's versions replace or hide what the index
returns for those keys. Writes by *other* processes become visible when the index catches up.

Hybrid search (``hybrid=True``): each node also carries a ``sparse`` vector of saturated term
weights of its embedding text (treehop's tokenizer, L2-normalised), and a query with
``dense_weight < 1`` sends its own sparse vector with ``advance.dense_weight``: the index
(``hnsw_hybrid``) scores ``w * cosine + (1 - w) * sparse_dot``. This is not the embedded store's
BM25 (no corpus IDF); scores are on the same [0, 1]-ish scale, rankings differ.

The SDK is synchronous (``requests``), so the store declares ``remote=True`` and the retriever
runs its calls in worker threads. The SDK retries *every* error three times, 400s included; this
store calls it with ``max_attempts=1`` and retries only what can succeed on a second try
(connection failures, 429, 5xx) with treehop's backoff. Errors become :class:`VikingDBError`
subclasses of :class:`~treehop.errors.StoreError` that say what to check.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import numpy as np
from pydantic import SecretStr

from .. import tags as tagmod
from .._http import (
    MAX_RESPONSE_BYTES,
    MAX_SECONDS,
    DeadlineExceeded,
    ResponseTooLarge,
    RetryPolicy,
    accepted_codings,
    call_with_deadline,
    check_deadline,
    decode_capped,
)
from ..errors import InvalidQueryError, NotFoundError, StoreError
from ..filters import CLIENT_SIDE_OPS, MetadataFilter, TagFilter
from ..models import Node
from ..redaction import redact
from ..secrets import resolve_secret
from ..text_tokenize import tokenize
from ..uri import is_within, uri_prefixes, within_any
from ._state_blobs import (
    BlobHead,
    DamagedHead,
    check_state_key,
    checked_head,
    old_head,
    read_blob,
    write_blob,
)
from .base import (
    Scope,
    ScoredNode,
    StoreCapabilities,
    Vector,
    check_number,
    check_search_args,
    node_matches_filter,
)

T = TypeVar("T")

DEFAULT_HOST: Final = "api-vikingdb.vikingdb.cn-beijing.volces.com"
DEFAULT_REGION: Final = "cn-beijing"
DEFAULT_INDEX: Final = "treehop_index"

MAX_WRITE_ROWS: Final = 100
"""upsert / update / delete / fetch take at most 100 rows or ids per request."""
MAX_SEARCH_LIMIT: Final = 5000
"""search_by_vector returns at most 5000 hits."""
STATE_PART_BYTES: Final = 32_768
"""A state blob is split into parts of this many bytes (base64: ~43.7k characters a row)."""

# Field names of the collection (see :func:`collection_schema`).
F_ID: Final = "id"
F_KIND: Final = "kind"
F_NODE_KEY: Final = "node_key"
F_PARENT_KEY: Final = "parent_key"
F_ANCESTOR_KEYS: Final = "ancestor_keys"
F_CONTEXT_TYPE: Final = "context_type"
F_LEVEL: Final = "level"
F_IS_LEAF: Final = "is_leaf"
F_CHUNK_INDEX: Final = "chunk_index"
F_TAG_LABELS: Final = "tag_labels"
F_MD_PRESENT: Final = "md_present"
F_SORT_KEY: Final = "sort_key"
F_NODE: Final = "node"
F_VECTOR: Final = "vector"
F_SPARSE: Final = "sparse"
MD_PREFIX: Final = "m_"
KIND_NODE: Final = "node"
KIND_STATE: Final = "state"

METADATA_TYPES: Final = frozenset(
    {"string", "int64", "float32", "bool", "list<string>", "list<int64>"}
)
_NUMERIC: Final = frozenset({"int64", "float32"})
_FIELD_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,60}\Z")
_META_STATE: Final = "\x00meta"
"""The internal state key of :attr:`VikingDBStore.meta` (no user key can contain NUL)."""
_NEVER: Final[dict[str, Any]] = {"op": "must", "field": F_KIND, "conds": ["\x00never"]}
_SPARSE_MAX_TERMS: Final = 256
_SPARSE_MAX_TERM_CHARS: Final = 64


# ------------------------------------------------------------------------------------------
# Errors
# ------------------------------------------------------------------------------------------
class VikingDBError(StoreError):
    """A VikingDB call failed. ``code`` / ``http_status`` / ``request_id`` are the service's."""

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        code: object = None,
        http_status: int | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.http_status = http_status
        self.request_id = request_id


class VikingDBAuthError(VikingDBError):
    """401 / 1000001: missing or invalid credentials (or a signature the service rejected)."""


class VikingDBPermissionError(VikingDBError):
    """403 / 1000002: the key pair may not use this collection, index or project."""


class VikingDBInvalidRequestError(VikingDBError):
    """400 / 1000003: the service rejected the request's parameters."""


class VikingDBNotFoundError(VikingDBError):
    """1000005 / NotFound.*: the collection (or index, or knowledge base) does not exist."""


class VikingDBUnavailableError(VikingDBError):
    """Connection failures, 429 and 5xx: worth retrying, and retried."""

    retryable = True


_HINTS: Final[Mapping[type[VikingDBError], str]] = {
    VikingDBAuthError: "unauthorized: check VOLC_ACCESSKEY/VOLC_SECRETKEY and the region",
    VikingDBPermissionError: "no permission: the access key may not use this resource/project",
    VikingDBInvalidRequestError: "invalid request",
    VikingDBNotFoundError: "not found: check the collection/index name (and project)",
    VikingDBUnavailableError: "service unavailable or rate limited",
    VikingDBError: "request failed",
}
_NUMERIC_CODE = re.compile(r"(?<!\d)(10000\d\d)(?!\d)")


def _classify(status: int | None, code: object, message: str) -> type[VikingDBError]:
    """Pick the error class from the HTTP status and the (numeric or string) service code."""
    text = str(code or "")
    num_match = _NUMERIC_CODE.search(text)
    num = int(num_match.group(1)) if num_match else None
    low = text.lower()
    if status == 401 or num == 1000001 or "unauthor" in low or "authenticat" in low:
        return VikingDBAuthError
    if "signature" in low:
        return VikingDBAuthError
    if status == 403 or num == 1000002 or "forbidden" in low or "permission" in low:
        return VikingDBPermissionError
    if num in (1000005, 1000008) or low.startswith("notfound") or status == 404:
        return VikingDBNotFoundError
    if status == 429 or num == 1000029 or "throttl" in low or "toomany" in low:
        return VikingDBUnavailableError
    if status is not None and status >= 500:
        return VikingDBUnavailableError
    if num == 1000003 or "invalid" in low or "missing" in low or status == 400:
        return VikingDBInvalidRequestError
    if status is None and ("failed to run" in message or "failed to ping" in message):
        return VikingDBUnavailableError
    return VikingDBError


def make_error(
    what: str,
    *,
    status: int | None,
    code: object,
    message: str | None,
    request_id: str | None,
) -> VikingDBError:
    """A typed, secret-free error for a failed call ``what`` (e.g. ``"search in 'kb'"``)."""
    msg = redact((message or "").strip().replace("\n", " "))
    cls = _classify(status, code, msg)
    text = f"VikingDB {what} failed: {_HINTS[cls]}"
    details = [f"code={code}"] if code not in (None, "") else []
    if status is not None:
        details.append(f"http={status}")
    if request_id and request_id != "unknown":
        details.append(f"request_id={request_id}")
    if details:
        text += f" ({', '.join(details)})"
    if msg:
        text += f": {msg[:300]}"
    return cls(text, code=code, http_status=status, request_id=request_id)


def translate_error(exc: BaseException, what: str) -> VikingDBError | None:
    """Map an exception raised by the SDK to a :class:`VikingDBError` (``None``: not the SDK's)."""
    if isinstance(exc, VikingDBError):
        return exc
    capped = _capped_cause(exc)
    if capped is not None:  # (not retried: the same answer would come back)
        return VikingDBError(f"VikingDB {what} failed: {capped}")
    name = type(exc).__name__
    if name == "VikingConnectionException":
        # Raised by the vector client's constructor when GET /api/vikingdb/Ping fails.
        detail = " ".join(str(a) for a in exc.args)[:300]
        return VikingDBUnavailableError(
            f"VikingDB {what} failed: cannot reach the service: {detail}"
        )
    if hasattr(exc, "code") and hasattr(exc, "request_id") and hasattr(exc, "status_code"):
        # vikingdb.exceptions.VikingException and its subclasses.
        return make_error(
            what,
            status=getattr(exc, "status_code", None),
            code=getattr(exc, "code", None),
            message=str(getattr(exc, "message", "") or ""),
            request_id=getattr(exc, "request_id", None),
        )
    if name == "ValidationError" and type(exc).__module__.startswith("pydantic"):
        # The SDK parses every response into pydantic models; a malformed answer lands here.
        return VikingDBError(f"VikingDB {what} failed: malformed response: {str(exc)[:300]}")
    return None


def _capped_cause(exc: BaseException) -> str | None:
    """What :class:`_CappedAdapter` refused, when it is behind ``exc`` (the SDK wraps every
    exception of its ``session.post`` in its own, the adapter's as the cause)."""
    seen = 0
    cur: BaseException | None = exc
    while cur is not None and seen < 8:
        if isinstance(cur, ResponseTooLarge):
            return str(cur)
        if isinstance(cur, _UndecodableAnswer):
            return f"undecodable answer: {cur}"
        cur = cur.__cause__ or cur.__context__
        seen += 1
    return None


class _UndecodableAnswer(Exception):
    """A body whose ``Content-Encoding`` does not decode (:func:`treehop._http.decode_capped`)."""


class _CappedAdapter:
    """A ``requests`` transport adapter that reads at most :data:`MAX_RESPONSE_BYTES` of an
    answer, decoded bounded as treehop's own HTTP clients do (:mod:`treehop._http`).

    Why: the VikingDB SDK posts through a ``requests`` session and reads ``response.content``
    whole, decoded by urllib3 without a limit: a 1 MB gzip answer of 1 GiB of spaces took
    the knowledge source to 3.2 GB peak (``gzip, gzip``: 4.2 GB), and a 1 GiB plain answer
    was held whole -- the deadline does not help, the SDK's thread goes on reading after it.
    Here a non-streamed answer is read raw (undecoded) to the limit, then decoded through
    :func:`treehop._http.decode_capped`; a streamed one (the SDK's server-sent events) is
    left as it was. It wraps the session's own adapter (pools, retries, proxies kept).
    ``default_timeout`` bounds each socket read of a request sent without a timeout (the
    SDK's constructor pings with none: a silent server held that thread forever)."""

    def __init__(self, inner: Any, default_timeout: float | None = None) -> None:
        self._inner = inner
        self._default_timeout = default_timeout

    def send(self, request: Any, stream: bool = False, **kwargs: Any) -> Any:
        request.headers["Accept-Encoding"] = accepted_codings()
        if kwargs.get("timeout") is None and self._default_timeout is not None:
            kwargs["timeout"] = self._default_timeout
        response = self._inner.send(request, stream=True, **kwargs)
        if stream:
            return response
        limit = MAX_RESPONSE_BYTES
        try:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise ResponseTooLarge(limit)
            raw = bytearray()
            for chunk in response.raw.stream(1 << 16, decode_content=False):
                raw += chunk
                if len(raw) > limit:
                    raise ResponseTooLarge(limit)
            try:
                body = decode_capped(bytes(raw), response.headers.get("content-encoding", ""))
            except ResponseTooLarge:
                raise
            except Exception as exc:  # (httpx.DecodingError: a broken gzip / zstd / br body)
                raise _UndecodableAnswer(str(exc)[:200]) from None
        finally:
            response.close()
        response.headers.pop("content-encoding", None)
        response._content = body
        response._content_consumed = True
        return response

    def close(self) -> None:
        self._inner.close()


def cap_sdk_session(client: Any) -> None:
    """Mount :class:`_CappedAdapter` over the adapters of the SDK client's ``requests``
    session (a client without one, a caller's double, is left alone)."""
    session = getattr(client, "session", None)
    adapters = getattr(session, "adapters", None)
    if session is None or not isinstance(adapters, Mapping):
        return
    for prefix, adapter in list(adapters.items()):
        if not isinstance(adapter, _CappedAdapter):
            session.mount(prefix, _CappedAdapter(adapter))


def _sdk_client(timeout_s: int, **kwargs: Any) -> Any:
    """A ``vikingdb.vector.VikingDB`` client whose session is capped from the start.

    Why: the SDK's constructor pings the service through its fresh ``requests`` session
    with no timeout, before :func:`cap_sdk_session` can mount :class:`_CappedAdapter`: a
    silent server held the constructor forever at ``deadline_s=None`` (and, with a
    deadline, the abandoned thread and its socket for good), and the answer was read
    uncapped. Mounting the adapter where the SDK builds the session gives the ping the
    per-read ``timeout_s`` and the size cap of every other call; ``deadline_s`` still
    bounds the whole constructor (:func:`treehop._http.call_with_deadline`)."""
    from vikingdb.vector import VikingDB

    class _CappedVikingDB(VikingDB):  # type: ignore[misc]
        @staticmethod
        def _build_session(**session_args: Any) -> Any:
            session = VikingDB._build_session(**session_args)
            for prefix, adapter in list(session.adapters.items()):
                session.mount(prefix, _CappedAdapter(adapter, default_timeout=timeout_s))
            return session

    return _CappedVikingDB(timeout=timeout_s, **kwargs)


def call_with_retries(fn: Callable[[], T], *, retry: RetryPolicy, what: str) -> T:
    """Run one SDK call, retrying only retryable failures; raise a :class:`VikingDBError`."""
    for attempt in range(retry.max_retries + 1):
        try:
            return fn()
        except Exception as exc:
            err = translate_error(exc, what)
            if err is None:
                raise
            if not err.retryable or attempt >= retry.max_retries:
                if err is exc:
                    raise
                raise err from exc
        time.sleep(retry.delay(attempt, None))
    raise AssertionError("unreachable")  # pragma: no cover


def _parse_meta(raw: bytes | None, where: str) -> dict[str, Any]:
    """The store's saved ``meta`` (a JSON object); a damaged one is a :class:`StoreError` at
    open, not the raw ``RecursionError`` / ``JSONDecodeError`` / ``ValueError`` (an integer
    past 4,300 digits) of ``json.loads``, nor a list kept as the meta (as MilvusStore)."""
    if not raw:
        return {}
    try:
        meta = json.loads(raw)
    except (ValueError, RecursionError):  # (UnicodeDecodeError is a ValueError)
        meta = None
    if not isinstance(meta, dict):
        raise StoreError(f"unreadable treehop meta in VikingDB {where!r}")
    return meta


def load_sdk() -> Any:
    """Import the ``vikingdb`` SDK lazily (an optional extra) with a clear error if missing."""
    try:
        import vikingdb
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise StoreError(
            "the VikingDB backends need the official SDK: pip install vikingdb-python-sdk "
            f"(import failed: {exc})"
        ) from exc
    return vikingdb


def resolve_keys(
    ak: str | SecretStr | None, sk: str | SecretStr | None, session_token: str | SecretStr | None
) -> tuple[SecretStr, SecretStr, SecretStr | None]:
    """Explicit keys win, else ``VOLC_ACCESSKEY`` / ``VOLC_SECRETKEY`` / ``VOLC_SESSIONTOKEN``."""
    a = resolve_secret(ak, "VOLC_ACCESSKEY", error=StoreError, what="ak")
    s = resolve_secret(sk, "VOLC_SECRETKEY", error=StoreError, what="sk")
    if a is None or s is None:
        raise StoreError(
            "VikingDB needs an access key pair: pass ak=/sk= or set VOLC_ACCESSKEY and "
            "VOLC_SECRETKEY"
        )
    token = resolve_secret(
        session_token, "VOLC_SESSIONTOKEN", error=StoreError, what="session_token"
    )
    return a, s, token


def check_endpoint(host: str, scheme: str) -> None:
    if scheme not in ("http", "https"):
        raise StoreError(f"scheme must be 'http' or 'https', got {scheme!r}")
    if not host or "/" in host or host.strip() != host:
        raise StoreError(f"host must be a bare host[:port], got {host!r}")


# ------------------------------------------------------------------------------------------
# Schema, keys, sparse vectors
# ------------------------------------------------------------------------------------------
def collection_schema(
    dimension: int,
    *,
    metadata_fields: Mapping[str, str] | None = None,
    hybrid: bool = False,
    index_name: str = DEFAULT_INDEX,
) -> dict[str, Any]:
    """The collection's fields and its index settings, for CreateVikingdbCollection / Index.

    Creating collections is a control-plane call (console, OpenAPI or ``volcengine`` SDK), not
    part of the data-plane SDK this store uses, so the store documents what to create instead of
    creating it. Every field except ``node``, ``vector`` and ``sparse`` must be scalar-indexed.
    """
    md = _check_metadata_fields(metadata_fields)
    fields: list[dict[str, Any]] = [
        {"field_name": F_ID, "field_type": "string", "is_primary_key": True},
        {"field_name": F_KIND, "field_type": "string"},
        {"field_name": F_NODE_KEY, "field_type": "string"},
        {"field_name": F_PARENT_KEY, "field_type": "string"},
        {"field_name": F_ANCESTOR_KEYS, "field_type": "list<string>"},
        {"field_name": F_CONTEXT_TYPE, "field_type": "string"},
        {"field_name": F_LEVEL, "field_type": "int64"},
        {"field_name": F_IS_LEAF, "field_type": "bool"},
        {"field_name": F_CHUNK_INDEX, "field_type": "int64"},
        {"field_name": F_TAG_LABELS, "field_type": "list<string>"},
        {"field_name": F_MD_PRESENT, "field_type": "list<string>"},
        {"field_name": F_SORT_KEY, "field_type": "int64"},
        *({"field_name": MD_PREFIX + name, "field_type": t} for name, t in md.items()),
        {"field_name": F_NODE, "field_type": "text"},
        {"field_name": F_VECTOR, "field_type": "vector", "dim": int(dimension)},
    ]
    if hybrid:
        fields.append({"field_name": F_SPARSE, "field_type": "sparse_vector"})
    scalar = [
        f["field_name"]
        for f in fields
        if f["field_type"] not in ("text", "vector", "sparse_vector") and f["field_name"] != F_ID
    ]
    return {
        "fields": fields,
        "index": {
            "index_name": index_name,
            "vector_index": {
                "index_type": "hnsw_hybrid" if hybrid else "hnsw",
                "distance": "cosine",
            },
            "scalar_index": scalar,
        },
    }


def _check_metadata_fields(metadata_fields: Mapping[str, str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, ftype in (metadata_fields or {}).items():
        if not isinstance(name, str) or not _FIELD_NAME.match(name):
            raise StoreError(
                f"metadata field name {name!r} must start with a letter and use letters, "
                "digits and '_' (at most 61 characters)"
            )
        if ftype not in METADATA_TYPES:
            raise StoreError(
                f"metadata field {name!r}: type {ftype!r} is not one of {sorted(METADATA_TYPES)}"
            )
        out[name] = ftype
    return out


def uri_key(uri: str) -> str:
    """The fixed-length key a URI is stored and filtered under."""
    return hashlib.blake2b(uri.encode("utf-8"), digest_size=16).hexdigest()


def label_key(label: str) -> str:
    """A tag label as stored in ``tag_labels`` (hashed only when too long for a string field)."""
    raw = label.encode("utf-8")
    return label if len(raw) <= 64 else "h:" + hashlib.blake2b(raw, digest_size=16).hexdigest()


def sort_key(key: str) -> int:
    """A unique-enough int64 per key, for stable keyset pagination of scans."""
    return int(key[:15], 16)


def sparse_document(
    text: str, k1: float = 1.2, b: float = 0.75, avgdl: float = 64.0
) -> dict[str, float]:
    """Saturated term weights of a document (BM25's TF part, no IDF), L2-normalised.

    Without corpus statistics at write time there is no IDF; saturation keeps a repeated word
    from dominating, and normalising puts the sparse dot product in [0, 1] like a cosine.
    """
    counts = Counter(t for t in tokenize(text) if len(t) <= _SPARSE_MAX_TERM_CHARS)
    if not counts:
        return {}
    dl = sum(counts.values())
    norm_len = k1 * (1 - b + b * dl / avgdl)
    weights = {t: c * (k1 + 1) / (c + norm_len) for t, c in counts.items()}
    if len(weights) > _SPARSE_MAX_TERMS:
        keep = sorted(weights, key=lambda t: (-weights[t], t))[:_SPARSE_MAX_TERMS]
        weights = {t: weights[t] for t in keep}
    return _l2(weights)


def sparse_query(text: str) -> dict[str, float]:
    """A query's term counts, L2-normalised."""
    counts = Counter(t for t in tokenize(text) if len(t) <= _SPARSE_MAX_TERM_CHARS)
    return _l2({t: float(c) for t, c in counts.items()}) if counts else {}


def _l2(weights: dict[str, float]) -> dict[str, float]:
    norm = math.sqrt(sum(v * v for v in weights.values()))
    return {t: v / norm for t, v in weights.items()} if norm > 0 else {}


def _sparse_dot(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return float(sum(v * b.get(t, 0.0) for t, v in a.items()))


# ------------------------------------------------------------------------------------------
# Filters
# ------------------------------------------------------------------------------------------
def _and(*conds: dict[str, Any] | None) -> dict[str, Any]:
    parts = [c for c in conds if c]
    return parts[0] if len(parts) == 1 else {"op": "and", "conds": parts}


def _or(*conds: dict[str, Any]) -> dict[str, Any]:
    return conds[0] if len(conds) == 1 else {"op": "or", "conds": list(conds)}


def _must(field: str, conds: Sequence[Any]) -> dict[str, Any]:
    return {"op": "must", "field": field, "conds": list(conds)}


def _must_not(field: str, conds: Sequence[Any]) -> dict[str, Any]:
    return {"op": "must_not", "field": field, "conds": list(conds)}


class _Untranslatable(Exception):
    """A metadata filter part that cannot run server-side (an undeclared field)."""


_COMPLEMENT: Final = {"gt": "lte", "gte": "lt", "lt": "gte", "lte": "gt"}


def _coerce_conds(ftype: str, conds: Sequence[Any]) -> list[Any]:
    """The conds that can equal a value of ``ftype`` under Python equality (``1 == True``)."""
    base = ftype[5:-1] if ftype.startswith("list<") else ftype
    out: list[Any] = []
    for c in conds:
        if base == "string":
            if isinstance(c, str):
                out.append(c)
        elif base == "int64":
            if isinstance(c, bool):
                out.append(int(c))
            elif isinstance(c, int):
                out.append(c)
            elif isinstance(c, float) and c.is_integer():
                out.append(int(c))
        elif base == "float32":
            if isinstance(c, (int, float)):
                out.append(float(c))
        elif base == "bool":
            if isinstance(c, bool):
                out.append(c)
            elif isinstance(c, (int, float)) and c in (0, 1):
                out.append(bool(c))
    return list(dict.fromkeys(out))


def translate_metadata(spec: Mapping[str, Any], fields: Mapping[str, str]) -> dict[str, Any]:
    """The server filter equal to :meth:`MetadataFilter.matches` on declared fields.

    ``md_present`` carries the DSL's "missing" semantics; ``range_out`` is rewritten into
    one-sided ``range`` parts (the DSL's "outside the range" is the union of the complements of
    its bounds), because VikingDB's own ``range_out`` reads its bounds differently.
    """
    op = spec["op"]
    if op in ("and", "or"):
        parts = [translate_metadata(c, fields) for c in spec["conds"]]
        return _and(*parts) if op == "and" else _or(*parts)
    name = spec["field"]
    ftype = fields.get(name)
    if ftype is None or op in CLIENT_SIDE_OPS or "node" in spec:
        # (no substring match, and "empty" would need missing or "" or an empty list; a
        # leaf on the node's URI, not a metadata field: evaluated in Python too)
        raise _Untranslatable(name)
    col = MD_PREFIX + name
    present = _must(F_MD_PRESENT, [name])
    absent = _must_not(F_MD_PRESENT, [name])
    if op in ("must", "must_not"):
        conds = _coerce_conds(ftype, spec["conds"])
        hit = _and(present, _must(col, conds)) if conds else _NEVER
        if op == "must":
            return hit
        return _or(absent, _must_not(col, conds)) if conds else _must(F_KIND, [KIND_NODE])
    bounds = {b: spec[b] for b in ("gt", "gte", "lt", "lte") if b in spec}
    if op == "range":
        if ftype not in _NUMERIC:
            return _NEVER
        return _and(present, {"op": "range", "field": col, **bounds})
    # range_out: missing -> True; present non-numeric -> False; numeric -> outside the range.
    if ftype not in _NUMERIC:
        return absent
    outside = [{"op": "range", "field": col, _COMPLEMENT[b]: v} for b, v in bounds.items()]
    return _or(absent, *outside)


@dataclass
class _Pending:
    """A write not yet visible in the index: a node version (or a deletion) and its vector."""

    node: Node | None
    vector: np.ndarray[Any, np.dtype[np.float32]] | None
    at: float


@dataclass
class _FilterSets:
    """Key sets derived from a (tags, metadata) filter by scanning, cached per filter."""

    matches: frozenset[str] | None
    """Keys of matching nodes, when the filter needs client-side evaluation (else ``None``)."""
    containing: frozenset[str] | None
    """Keys of directories that contain a match (computed only for traversal)."""
    created: float
    version: int


# ------------------------------------------------------------------------------------------
# The store
# ------------------------------------------------------------------------------------------
class VikingDBStore:
    """Nodes and vectors in a VikingDB collection, searched through one of its indexes.

    Args:
        collection_name: The collection (create it with :func:`collection_schema`), or give
            ``resource_id`` instead.
        dimension: The vector field's dimension (required: state rows need a vector too).
        index_name: The index searched (scalar-index every field except node/vector/sparse).
        project_name: The project of the collection (VikingDB's default: ``default``).
        host / region / scheme: The data-plane endpoint. ``127.0.0.1:PORT`` with
            ``scheme="http"`` works for a local stand-in: the host is not signed.
        ak / sk / session_token: Keys; ``None`` reads ``VOLC_ACCESSKEY`` / ``VOLC_SECRETKEY`` /
            ``VOLC_SESSIONTOKEN``. Kept as ``SecretStr``; never in a repr, log or error.
        metadata_fields: Metadata fields filtered server-side, ``{name: type}`` with a type of
            ``string``, ``int64``, ``float32``, ``bool``, ``list<string>``, ``list<int64>``. A
            node whose value does not fit the declared type is rejected at upsert.
        hybrid: Write sparse vectors and answer ``dense_weight < 1`` with hybrid search (the
            index must be ``hnsw_hybrid``).
        consistency_window_s: How long this store's own writes are overlaid on index reads
            (VikingDB's index lags writes by ~10-20 s). ``0`` trusts the index.
        filter_cache_ttl_s: How long key sets derived from a filter are reused.
        timeout_s: Per-request timeout (whole seconds, as the SDK takes them).
        retry: Retries of connection failures, 429 and 5xx (4xx are never retried).
        client: A ready ``vikingdb.vector.VikingDB`` client (then host/keys are not used).
        max_list_items / max_row_bytes: VikingDB's documented limits on list fields and on
            one row's fields; exceeding them raises :class:`StoreError` before any request.
        scan_page: Rows per page when scanning (children, subtrees, filters).
        deadline_s: Total time of one SDK call, retries included (``None``: unbounded); the
            SDK's ``timeout`` bounds each socket read only. Past it the call raises
            :class:`StoreError` (a write may still land: the SDK's thread finishes on its own).
    """

    def __init__(
        self,
        collection_name: str | None = None,
        *,
        dimension: int,
        index_name: str = DEFAULT_INDEX,
        resource_id: str | None = None,
        project_name: str | None = None,
        host: str = DEFAULT_HOST,
        region: str = DEFAULT_REGION,
        scheme: str = "https",
        ak: str | SecretStr | None = None,
        sk: str | SecretStr | None = None,
        session_token: str | SecretStr | None = None,
        metadata_fields: Mapping[str, str] | None = None,
        hybrid: bool = False,
        consistency_window_s: float = 30.0,
        filter_cache_ttl_s: float = 30.0,
        timeout_s: int = 30,
        retry: RetryPolicy | None = None,
        client: Any = None,
        max_list_items: int = 32,
        max_row_bytes: int = 65_535,
        scan_page: int = 1000,
        deadline_s: float | None = 60.0,
    ) -> None:
        if not collection_name and not resource_id:
            raise StoreError("VikingDBStore needs collection_name= or resource_id=")
        # (the library's rule, as every count here: a numpy integer is one, ``384.0`` is not;
        # it was ``isinstance(int)``, refusing ``np.int64(384)`` from a model's shape, with
        # the whole repr of whatever was given; helper leftovers66b)
        dimension = int(check_number("dimension", dimension, 1, integer=True))
        if not index_name:
            raise StoreError("index_name must be a non-empty string")
        consistency_window_s = check_number("consistency_window_s", consistency_window_s, 0)
        filter_cache_ttl_s = check_number("filter_cache_ttl_s", filter_cache_ttl_s, 0)
        timeout_s = int(check_number("timeout_s", timeout_s, 1, MAX_SECONDS, whole=True))
        max_list_items = int(check_number("max_list_items", max_list_items, 1, integer=True))
        max_row_bytes = int(check_number("max_row_bytes", max_row_bytes, 1024, integer=True))
        scan_page = int(check_number("scan_page", scan_page, 1, 5000, integer=True))
        self._md_fields = _check_metadata_fields(metadata_fields)
        if len(self._md_fields) > max_list_items:
            raise StoreError(f"at most {max_list_items} metadata fields can be declared")
        self.collection_name = collection_name
        self.resource_id = resource_id
        self.project_name = project_name
        self.index_name = index_name
        self.host = host
        self.region = region
        self.scheme = scheme
        self.hybrid = bool(hybrid)
        self.capabilities = StoreCapabilities(
            hybrid=self.hybrid, tag_filter=True, prefix_scope=False, remote=True
        )
        self.consistency_window_s = float(consistency_window_s)
        self.filter_cache_ttl_s = float(filter_cache_ttl_s)
        self.timeout_s = timeout_s
        self.deadline_s = check_deadline(deadline_s, StoreError)
        self.retry = retry if retry is not None else RetryPolicy()
        self.max_list_items = max_list_items
        self.max_row_bytes = max_row_bytes
        self.scan_page = scan_page
        self._dim = dimension
        self._lock = threading.RLock()
        self._pending: dict[str, _Pending] = {}
        self._version = 0
        self._filter_cache: dict[str, _FilterSets] = {}
        self._name = collection_name or resource_id or "?"
        sdk = load_sdk()
        from vikingdb.request_options import RequestOptions

        self._options_cls = RequestOptions
        if client is None:
            check_endpoint(host, scheme)
            a, s, token = resolve_keys(ak, sk, session_token)
            # One IAM object per client: the SDK binds it to one service and region.
            auth = sdk.IAM(ak=a.get_secret_value(), sk=s.get_secret_value())
            what = f"connect to {scheme}://{host}"
            try:
                client = call_with_deadline(
                    lambda: call_with_retries(
                        lambda: _sdk_client(
                            self.timeout_s,
                            host=host,
                            region=region,
                            auth=auth,
                            scheme=scheme,
                            sts_token=token.get_secret_value() if token else "",
                        ),
                        retry=self.retry,
                        what=what,
                    ),
                    self.deadline_s,
                )
            except DeadlineExceeded as exc:
                raise StoreError(
                    f"VikingDB {what} failed: no answer within the {exc.deadline_s:g}s "
                    "deadline (deadline_s)"
                ) from None
        cap_sdk_session(client)  # (its answers read bounded: _CappedAdapter)
        self._client = client
        meta_args = {
            "collection_name": collection_name,
            "resource_id": resource_id,
            "project_name": project_name,
        }
        self._collection = client.collection(**meta_args)
        self._index = client.index(index_name=index_name, **meta_args)
        raw_meta = self._get_blob(_META_STATE)
        self._meta: dict[str, Any] = _parse_meta(raw_meta, f"{collection_name}/{index_name}")
        self._saved_meta = json.dumps(self._meta, sort_keys=True)

    # ------------------------------------------------------------------ basics
    def __repr__(self) -> str:
        return (
            f"VikingDBStore(collection={self._name!r}, index={self.index_name!r}, "
            f"host={self.host!r}, region={self.region!r}, dimension={self._dim}, "
            f"hybrid={self.hybrid}, ak='**********', sk='**********')"
        )

    @property
    def dimension(self) -> int | None:
        return self._dim

    @property
    def meta(self) -> dict[str, Any]:
        """Free-form index metadata (embedder name, ...), persisted by :meth:`save`."""
        return self._meta

    def close(self) -> None:
        """Close the HTTP session of the SDK client."""
        session = getattr(self._client, "session", None)
        if session is not None:
            session.close()

    def _req(self, what: str, fn: Callable[..., Any], payload: Mapping[str, Any]) -> Any:
        """One SDK call with this store's retry policy and error mapping."""
        opts = self._options_cls(max_attempts=1, timeout=self.timeout_s)
        label = f"{what} ({self._name}/{self.index_name})"
        try:
            resp = call_with_deadline(
                lambda: call_with_retries(
                    lambda: fn(payload, request_options=opts), retry=self.retry, what=label
                ),
                self.deadline_s,
            )
        except DeadlineExceeded as exc:
            raise StoreError(
                f"VikingDB {label} failed: no complete answer within the "
                f"{exc.deadline_s:g}s deadline (deadline_s)"
            ) from None
        code = getattr(resp, "code", None)
        if code not in (None, "", "Success", 0):
            raise make_error(
                label,
                status=200,
                code=code,
                message=getattr(resp, "message", ""),
                request_id=getattr(resp, "request_id", None),
            )
        return resp

    def _touch(self) -> None:
        self._version += 1
        self._filter_cache.clear()

    # ------------------------------------------------------------------ overlay
    def _live_pending(self) -> dict[str, _Pending]:
        """This store's writes the index may not show yet (expired ones are dropped)."""
        if self.consistency_window_s <= 0:
            return {}
        with self._lock:
            if not self._pending:
                return {}
            horizon = time.monotonic() - self.consistency_window_s
            stale = [k for k, p in self._pending.items() if p.at < horizon]
            for k in stale:
                del self._pending[k]
            return dict(self._pending)

    def _remember(self, key: str, node: Node | None, vector: np.ndarray[Any, Any] | None) -> None:
        if self.consistency_window_s <= 0:
            return
        with self._lock:
            vec = None if vector is None else np.asarray(vector, dtype=np.float32).copy()
            self._pending[key] = _Pending(node, vec, time.monotonic())

    # ------------------------------------------------------------------ rows
    def _node_row(self, node: Node, vector: np.ndarray[Any, Any]) -> dict[str, Any]:
        key = uri_key(node.uri)
        ancestors = [uri_key(a) for a in uri_prefixes(node.uri)]
        labels = sorted({label_key(lab) for lab in tagmod.labels(node.tags)})
        for field, items in ((F_ANCESTOR_KEYS, ancestors), (F_TAG_LABELS, labels)):
            if len(items) > self.max_list_items:
                raise StoreError(
                    f"{node.uri}: {len(items)} {field} exceed VikingDB's list limit of "
                    f"{self.max_list_items} (max_list_items)"
                )
        row: dict[str, Any] = {
            F_ID: key,
            F_KIND: KIND_NODE,
            F_NODE_KEY: key,
            F_PARENT_KEY: uri_key(node.parent_uri) if node.parent_uri is not None else "",
            F_ANCESTOR_KEYS: ancestors,
            F_CONTEXT_TYPE: node.context_type.value,
            F_LEVEL: node.level,
            F_IS_LEAF: node.is_leaf,
            F_CHUNK_INDEX: node.chunk_index if node.chunk_index is not None else -1,
            F_TAG_LABELS: labels,
            F_SORT_KEY: sort_key(key),
            F_NODE: node.model_dump_json(),
            F_VECTOR: [float(x) for x in vector],
        }
        present: list[str] = []
        for name, ftype in self._md_fields.items():
            if name not in node.metadata or node.metadata[name] is None:
                continue
            row[MD_PREFIX + name] = self._typed(node, name, ftype, node.metadata[name])
            present.append(name)
        row[F_MD_PRESENT] = present
        if self.hybrid:
            row[F_SPARSE] = sparse_document(node.embedding_text())
        size = len(json.dumps(row, ensure_ascii=False).encode("utf-8"))
        if size > self.max_row_bytes:
            raise StoreError(
                f"{node.uri}: the row is {size} bytes, over VikingDB's {self.max_row_bytes}-byte "
                "limit per row (max_row_bytes); ingest with a smaller chunk size"
            )
        return row

    @staticmethod
    def _typed(node: Node, name: str, ftype: str, value: Any) -> Any:
        def bad() -> StoreError:
            return StoreError(
                f"{node.uri}: metadata {name}={value!r} does not fit the declared VikingDB type "
                f"{ftype!r} (metadata_fields)"
            )

        def scalar(base: str, v: Any) -> Any:
            if base == "string":
                if not isinstance(v, str):
                    raise bad()
                if len(v.encode("utf-8")) > 256:
                    raise StoreError(f"{node.uri}: metadata {name} is longer than 256 bytes")
                return v
            if base == "int64":
                if isinstance(v, bool) or not isinstance(v, int) or not -(2**63) <= v < 2**63:
                    raise bad()
                return v
            if base == "float32":
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    raise bad()
                return float(v)
            if not isinstance(v, bool):
                raise bad()
            return v

        if ftype.startswith("list<"):
            if not isinstance(value, list):
                raise bad()
            return [scalar(ftype[5:-1], v) for v in value]
        return scalar(ftype, value)

    def _parse_node(self, fields: Mapping[str, Any], what: str) -> Node:
        raw = fields.get(F_NODE)
        if not isinstance(raw, str):
            raise StoreError(f"VikingDB {what}: a row has no '{F_NODE}' text field")
        try:
            return Node.model_validate_json(raw)
        except ValueError as exc:
            raise StoreError(f"VikingDB {what}: a row's node JSON is invalid: {exc}") from exc

    # ------------------------------------------------------------------ writes
    def upsert(self, nodes: Sequence[Node], vectors: Vector) -> None:
        vecs = np.asarray(vectors, dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[0] != len(nodes):
            raise StoreError(f"upsert: {len(nodes)} nodes but vectors of shape {vecs.shape}")
        if not nodes:
            return
        if vecs.shape[1] != self._dim:
            raise StoreError(
                f"vector dimension {vecs.shape[1]} does not match the index ({self._dim})"
            )
        if not np.isfinite(vecs).all():
            raise StoreError("upsert: vectors contain NaN or infinity")
        last: dict[str, int] = {}
        for i, n in enumerate(nodes):
            last[n.uri] = i  # the last version of a URI repeated in one batch wins
        order = sorted(last.values())
        rows = [self._node_row(nodes[i], vecs[i]) for i in order]
        for start in range(0, len(rows), MAX_WRITE_ROWS):
            self._req(
                "upsert", self._collection.upsert, {"data": rows[start : start + MAX_WRITE_ROWS]}
            )
        with self._lock:
            for i in order:
                self._remember(uri_key(nodes[i].uri), nodes[i], vecs[i])
            self._touch()

    def delete(self, uris: Sequence[str]) -> int:
        keys = list(dict.fromkeys(uri_key(u) for u in uris))
        if not keys:
            return 0
        existing = [k for k, _ in self._fetch_rows(keys)]
        for start in range(0, len(existing), MAX_WRITE_ROWS):
            self._req(
                "delete", self._collection.delete, {"ids": existing[start : start + MAX_WRITE_ROWS]}
            )
        with self._lock:
            for k in existing:
                self._remember(k, None, None)
            self._touch()
        return len(existing)

    def update_tags(self, tags_by_uri: Mapping[str, list[str]]) -> None:
        """Replace tags with the partial ``update`` API: no vector is read or written."""
        if not tags_by_uri:
            return
        want = {uri_key(u): list(t) for u, t in tags_by_uri.items()}
        found = {k: self._parse_node(f, "update_tags") for k, f in self._fetch_rows(list(want))}
        updated: dict[str, Node] = {}
        rows: list[dict[str, Any]] = []
        for key, node in found.items():
            new = node.model_copy(update={"tags": want[key]})
            labels = sorted({label_key(lab) for lab in tagmod.labels(new.tags)})
            if len(labels) > self.max_list_items:
                raise StoreError(
                    f"{node.uri}: {len(labels)} tag labels exceed VikingDB's list limit of "
                    f"{self.max_list_items} (max_list_items)"
                )
            rows.append({F_ID: key, F_NODE: new.model_dump_json(), F_TAG_LABELS: labels})
            updated[key] = new
        for start in range(0, len(rows), MAX_WRITE_ROWS):
            self._req(
                "update", self._collection.update, {"data": rows[start : start + MAX_WRITE_ROWS]}
            )
        if self.consistency_window_s > 0 and updated:
            # The overlay needs each node's vector to score it locally; the tags changed, the
            # vector did not, so the index (or the overlay) still has the right one.
            pending = self._live_pending()
            need = [k for k in updated if k not in pending or pending[k].vector is None]
            vecs = self._index_vectors(need) if need else {}
            for key, node in updated.items():
                p = pending.get(key)
                vec = p.vector if p is not None and p.vector is not None else vecs.get(key)
                if vec is not None:
                    self._remember(key, node, vec)
        with self._lock:
            self._touch()

    # ------------------------------------------------------------------ point reads
    def _fetch_rows(self, keys: Sequence[str]) -> list[tuple[str, Mapping[str, Any]]]:
        """Rows by key from the collection (read-your-writes), in the order found."""
        out: list[tuple[str, Mapping[str, Any]]] = []
        for start in range(0, len(keys), MAX_WRITE_ROWS):
            resp = self._req(
                "fetch", self._collection.fetch, {"ids": list(keys[start : start + MAX_WRITE_ROWS])}
            )
            result = resp.result
            for item in result.items if result is not None else []:
                out.append((str(item.id), item.fields or {}))
        return out

    def _index_vectors(self, keys: Sequence[str]) -> dict[str, np.ndarray[Any, Any]]:
        out: dict[str, np.ndarray[Any, Any]] = {}
        for start in range(0, len(keys), MAX_WRITE_ROWS):
            payload = {"ids": list(keys[start : start + MAX_WRITE_ROWS]), "output_fields": []}
            resp = self._req("fetch_in_index", self._index.fetch, payload)
            result = resp.result
            for item in result.items if result is not None else []:
                vec = item.dense_vector
                if vec is None:
                    vec = (item.fields or {}).get(F_VECTOR)
                if vec is not None:
                    out[str(item.id)] = self._answered_vector(vec)
        return out

    def _answered_vector(self, vec: Any) -> np.ndarray[Any, Any]:
        """A vector the index answered, checked: one of another width was returned as it
        was (``get_vectors`` gave a ``(2, 2)`` array for a 4-dimensional index, and rows of
        mixed widths a raw ``ValueError`` from ``np.stack``), NaN and infinity too (to be
        written again by a re-add that reuses vectors)."""
        try:
            # (quiet: a value past float32 becomes inf, refused below; numpy's
            # RuntimeWarning escaped raw where warnings are errors)
            with np.errstate(over="ignore", invalid="ignore"):
                v = np.asarray(vec, dtype=np.float32)
        except (TypeError, ValueError, OverflowError):
            raise StoreError("VikingDB fetch_in_index: a vector is not a list of numbers") from None
        if v.shape != (self._dim,) or not np.isfinite(v).all():
            raise StoreError(
                f"VikingDB fetch_in_index: a vector of shape {v.shape} answered, expected "
                f"{self._dim} finite values"
            )
        return v

    def get(self, uris: Sequence[str]) -> list[Node | None]:
        keys = [uri_key(u) for u in uris]
        found = {
            k: self._parse_node(f, "get") for k, f in self._fetch_rows(list(dict.fromkeys(keys)))
        }
        return [found.get(k) for k in keys]

    def get_vectors(self, uris: Sequence[str]) -> Vector:
        keys = [uri_key(u) for u in uris]
        pending = self._live_pending()
        have: dict[str, np.ndarray[Any, Any]] = {}
        for k in keys:
            p = pending.get(k)
            if p is not None and p.node is not None and p.vector is not None:
                have[k] = p.vector
        missing = [k for k in dict.fromkeys(keys) if k not in have]
        if missing:
            have.update(self._index_vectors(missing))
        lost = [u for u, k in zip(uris, keys, strict=True) if k not in have]
        if lost:
            raise NotFoundError(
                f"no vector in index {self.index_name!r} for {lost[:3]} (not written, or written "
                "by another process less than the index lag ago)"
            )
        if not keys:
            return np.zeros((0, self._dim), np.float32)
        return np.stack([have[k] for k in keys]).astype(np.float32)

    # ------------------------------------------------------------------ scans
    def _scan(
        self, filt: dict[str, Any], output_fields: Sequence[str], limit: int | None = None
    ) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """Every index row matching ``filt``, by keyset pagination on ``sort_key``."""
        last: int | None = None
        seen = 0
        fields = list(dict.fromkeys([*output_fields, F_SORT_KEY]))
        while True:
            page = self.scan_page if limit is None else min(self.scan_page, limit - seen)
            if page <= 0:
                return
            cond = (
                filt
                if last is None
                else _and(filt, {"op": "range", "field": F_SORT_KEY, "gt": last})
            )
            payload = {
                "field": F_SORT_KEY,
                "order": "asc",
                "filter": cond,
                "limit": page,
                "output_fields": fields,
            }
            resp = self._req("scan", self._index.search_by_scalar, payload)
            items = resp.result.data if resp.result is not None else []
            before = last
            for item in items:
                f = item.fields or {}
                sk = f.get(F_SORT_KEY)
                if isinstance(sk, int):
                    last = sk if last is None else max(last, sk)
                seen += 1
                yield str(item.id), f
            if len(items) < page or last is None:
                return
            if last == before:
                # A full page that did not move past the last sort key: a server that
                # ignored the ``gt`` condition answers that page again and again, and the
                # scan (every request within its deadline) never ended.
                raise StoreError(
                    f"VikingDB scan (index {self.index_name!r}): the server "
                    f"answered a full page at or below sort key {last} again (no progress)"
                )

    def _scan_nodes(self, filt: dict[str, Any], limit: int | None = None) -> list[tuple[str, Node]]:
        return [(k, self._parse_node(f, "scan")) for k, f in self._scan(filt, [F_NODE], limit)]

    def _merged(
        self, filt: dict[str, Any], keep: Callable[[Node], bool], limit: int | None = None
    ) -> list[Node]:
        """Index rows matching ``filt`` with this store's pending writes laid over them."""
        pending = self._live_pending()
        out = {
            k: n for k, n in self._scan_nodes(filt, None if pending else limit) if k not in pending
        }
        for k, p in pending.items():
            if p.node is not None and keep(p.node):
                out[k] = p.node
        return list(out.values())

    def children(self, uri: str) -> list[Node]:
        filt = _and(_must(F_KIND, [KIND_NODE]), _must(F_PARENT_KEY, [uri_key(uri)]))
        kids = self._merged(filt, lambda n: n.parent_uri == uri)
        kids.sort(key=lambda n: (n.chunk_index if n.chunk_index is not None else -1, n.uri))
        return kids

    def iter_nodes(self, subtree: str | None = None) -> Iterator[Node]:
        filt = _must(F_KIND, [KIND_NODE])
        if subtree is None:
            if self._live_pending():
                yield from self._merged(filt, lambda n: True)
            else:  # stream page by page: the whole collection need not fit in memory
                for _, fields in self._scan(filt, [F_NODE]):
                    yield self._parse_node(fields, "scan")
            return
        key = uri_key(subtree)
        filt = _and(filt, _or(_must(F_NODE_KEY, [key]), _must(F_ANCESTOR_KEYS, [key])))
        nodes = self._merged(filt, lambda n: is_within(n.uri, subtree))
        nodes.sort(key=lambda n: n.uri)
        yield from nodes

    def __len__(self) -> int:
        payload = {"op": "count", "filter": _must(F_KIND, [KIND_NODE])}
        resp = self._req("count", self._index.aggregate, payload)
        agg = resp.result.agg if resp.result is not None else {}
        total = next((v for k, v in agg.items() if str(k).strip("_").lower() == "total"), 0)
        n = int(total or 0)
        pending = self._live_pending()
        if pending:
            visible = self._visible_keys(list(pending))
            for k, p in pending.items():
                if p.node is not None and k not in visible:
                    n += 1
                elif p.node is None and k in visible:
                    n -= 1
        return max(n, 0)

    def _visible_keys(self, keys: Sequence[str]) -> set[str]:
        """Which of these node keys the index already shows (one scan per 1000 keys)."""
        out: set[str] = set()
        for start in range(0, len(keys), 1000):
            chunk = list(keys[start : start + 1000])
            filt = _and(_must(F_KIND, [KIND_NODE]), _must(F_NODE_KEY, chunk))
            out.update(k for k, _ in self._scan(filt, []))
        return out

    # ------------------------------------------------------------------ filters
    def _filter_sets(
        self, tags: TagFilter, md: MetadataFilter | None, traversal: bool
    ) -> _FilterSets:
        """Client-side match keys (undeclared metadata) and containing-directory keys."""
        ckey = tags.key() + "|" + (md.key() if md else "")
        now = time.monotonic()
        with self._lock:
            hit = self._filter_cache.get(ckey)
            version = self._version
        if (
            hit is not None
            and now - hit.created <= self.filter_cache_ttl_s
            and (hit.containing is not None or not traversal)
        ):
            return hit
        server_md: dict[str, Any] | None = None
        needs_client = False
        if md is not None:
            try:
                server_md = translate_metadata(md.spec, self._md_fields)
            except _Untranslatable:
                needs_client = True
        base = _and(_must(F_KIND, [KIND_NODE]), self._tag_filter(tags), server_md)
        pending = self._live_pending()
        matching: set[str] = set()
        containing_keys: set[str] = set()
        if needs_client:
            # Undeclared metadata: the server narrows by everything else, Python decides.
            for k, node in self._scan_nodes(base):
                if k not in pending and node_matches_filter(node, tags, md):
                    matching.add(k)
                    containing_keys.update(uri_key(a) for a in uri_prefixes(node.uri))
        elif traversal:
            # The server filter is exact: only the ancestor keys of its matches are needed.
            for k, fields in self._scan(base, [F_ANCESTOR_KEYS]):
                if k not in pending:
                    matching.add(k)
                    containing_keys.update(str(a) for a in fields.get(F_ANCESTOR_KEYS) or [])
        for k, p in pending.items():
            if p.node is not None and node_matches_filter(p.node, tags, md):
                matching.add(k)
                containing_keys.update(uri_key(a) for a in uri_prefixes(p.node.uri))
        containing = frozenset(containing_keys) if traversal else None
        sets = _FilterSets(
            matches=frozenset(matching) if needs_client else None,
            containing=containing,
            created=now,
            version=version,
        )
        with self._lock:
            if self._version == version:
                self._filter_cache[ckey] = sets
        return sets

    @staticmethod
    def _tag_filter(tags: TagFilter) -> dict[str, Any] | None:
        parts: list[dict[str, Any]] = []
        if tags.any_of:
            parts.append(_must(F_TAG_LABELS, [label_key(t) for t in tags.any_of]))
        parts.extend(_must(F_TAG_LABELS, [label_key(t)]) for t in tags.all_of)
        return _and(*parts) if parts else None

    def _match_filter(self, tags: TagFilter, md: MetadataFilter | None) -> dict[str, Any] | None:
        """The server filter selecting nodes that match (tags, metadata)."""
        if not tags and md is None:
            return None
        tag_part = self._tag_filter(tags)
        if md is None:
            return tag_part
        try:
            return _and(tag_part, translate_metadata(md.spec, self._md_fields))
        except _Untranslatable:
            keys = self._filter_sets(tags, md, traversal=False).matches or frozenset()
            return _must(F_NODE_KEY, sorted(keys)) if keys else _NEVER

    def _static_filter(self, scope: Scope) -> dict[str, Any]:
        parts: list[dict[str, Any] | None] = [_must(F_KIND, [KIND_NODE])]
        if scope.parent_uri is not None:
            parts.append(_must(F_PARENT_KEY, [uri_key(scope.parent_uri)]))
        elif scope.subtrees:
            keys = [uri_key(s) for s in dict.fromkeys(scope.subtrees)]
            parts.append(_or(_must(F_NODE_KEY, keys), _must(F_ANCESTOR_KEYS, keys)))
        if scope.context_types:
            parts.append(_must(F_CONTEXT_TYPE, [c.value for c in scope.context_types]))
        if scope.levels:
            parts.append(_must(F_LEVEL, sorted(set(scope.levels))))
        if scope.leaves_only:
            parts.append(_must(F_IS_LEAF, [True]))
        if scope.non_leaves_only:
            parts.append(_must(F_IS_LEAF, [False]))
        if scope.exclude_uris:
            parts.append(_must_not(F_NODE_KEY, sorted(uri_key(u) for u in scope.exclude_uris)))
        return _and(*parts)

    def _scope_filter(self, scope: Scope) -> tuple[dict[str, Any], frozenset[str]]:
        """The server filter of a scope, and the containing-directory keys (traversal)."""
        static = self._static_filter(scope)
        if not scope.filtered:
            return static, frozenset()
        match = self._match_filter(scope.tags, scope.metadata)
        assert match is not None
        if not scope.traversal:
            return _and(static, match), frozenset()
        containing = self._filter_sets(scope.tags, scope.metadata, traversal=True).containing
        cont = containing or frozenset()
        if not cont:
            return _and(static, match), cont
        via = _and(_must(F_IS_LEAF, [False]), _must(F_NODE_KEY, sorted(cont)))
        return _and(static, _or(match, via)), cont

    def _local_eligible(self, node: Node, scope: Scope, containing: frozenset[str]) -> bool:
        if not scope.admits_structure(node) or node.uri in scope.exclude_uris:
            return False
        if not scope.filtered:
            return True
        if node_matches_filter(node, scope.tags, scope.metadata):
            return True
        return scope.traversal and not node.is_leaf and uri_key(node.uri) in containing

    # ------------------------------------------------------------------ search
    def search(
        self,
        vector: Vector,
        scope: Scope,
        limit: int,
        *,
        query_text: str | None = None,
        dense_weight: float = 1.0,
    ) -> list[ScoredNode]:
        check_search_args(limit, dense_weight)
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        if q.shape[0] != self._dim:
            raise InvalidQueryError(
                f"query vector has dimension {q.shape[0]}, index has {self._dim}"
            )
        qn = float(np.linalg.norm(q))
        qs: dict[str, float] = {}
        if self.hybrid and query_text and dense_weight < 1.0:
            qs = sparse_query(query_text)
        w = dense_weight if qs else 1.0
        filt, containing = self._scope_filter(scope)
        pending = self._live_pending()
        hidden = [k for k, p in pending.items() if p.node is None or self._maybe_in(p.node, scope)]
        request_limit = min(limit + len(hidden), MAX_SEARCH_LIMIT)
        payload: dict[str, Any] = {
            "dense_vector": [float(x) for x in q],
            "filter": filt,
            "limit": request_limit,
            "output_fields": [F_NODE, F_VECTOR] if qs else [F_NODE],
        }
        if qs:
            payload["sparse_vector"] = qs
            payload["advance"] = {"dense_weight": w}
        resp = self._req("search_by_vector", self._index.search_by_vector, payload)
        cands: list[tuple[float, float, float | None, Node]] = []
        for item in resp.result.data if resp.result is not None else []:
            key = str(item.id)
            if key in pending:
                continue
            fields = item.fields or {}
            node = self._parse_node(fields, "search")
            score = float(item.score if item.score is not None else 0.0)
            dense = score
            if qs:
                vec = fields.get(F_VECTOR)
                dense = _cosine(q, qn, vec) if vec is not None else score
            # (NaN would rank anywhere and reach the results; checked after the row's vector,
            # whose own error names the cause when the score came from a malformed one)
            if not math.isfinite(score):
                raise StoreError(f"VikingDB search: a row's score is {score}, not finite")
            lex = (score - w * dense) / (1.0 - w) if qs else None
            cands.append((score, dense, lex, node))
        for p in pending.values():
            if p.node is None or p.vector is None:
                continue
            if not self._local_eligible(p.node, scope, containing):
                continue
            dense = _cosine(q, qn, p.vector)
            if qs:
                plex = _sparse_dot(qs, sparse_document(p.node.embedding_text()))
                cands.append((w * dense + (1 - w) * plex, dense, plex, p.node))
            else:
                cands.append((dense, dense, None, p.node))
        cands.sort(key=lambda c: -c[0])  # stable: the index's order among equal scores
        out: list[ScoredNode] = []
        for c_score, c_dense, c_lex, c_node in cands[:limit]:
            matches = True
            if scope.filtered:
                matches = node_matches_filter(c_node, scope.tags, scope.metadata)
            out.append(
                ScoredNode(
                    node=c_node,
                    score=c_score,
                    vector_score=c_dense,
                    lexical_score=c_lex,
                    matches=matches,
                )
            )
        return out

    @staticmethod
    def _maybe_in(node: Node, scope: Scope) -> bool:
        """Whether the index's (older) version of a pending node could fall in ``scope``."""
        if scope.parent_uri is not None:
            return node.parent_uri == scope.parent_uri
        return not scope.subtrees or within_any(node.uri, scope.subtrees)

    def find_by_tags(
        self, labels: Sequence[str], scope: Scope, limit: int
    ) -> Mapping[str, list[Node]]:
        """Per label, up to ``limit`` nodes in ``scope`` carrying it (the scope's own tag and
        metadata filters do not apply, as in the embedded store)."""
        static = self._static_filter(scope)
        out: dict[str, list[Node]] = {}
        for label in dict.fromkeys(labels):
            filt = _and(static, _must(F_TAG_LABELS, [label_key(label)]))

            def keep(n: Node, label: str = label) -> bool:
                return (
                    label in tagmod.labels(n.tags)
                    and scope.admits_structure(n)
                    and n.uri not in scope.exclude_uris
                )

            found = self._merged(filt, keep, limit)
            found.sort(key=lambda n: uri_key(n.uri))
            if found:
                out[label] = found[:limit]
        return out

    # ------------------------------------------------------------------ state blobs
    def get_state(self, key: str) -> bytes | None:
        check_state_key(key)
        return self._get_blob(key)

    def put_state(self, key: str, value: bytes) -> None:
        check_state_key(key)
        self._put_blob(key, bytes(value))

    def drop_state(self, key: str) -> None:
        """Remove the state blob ``key``: its head row, then its parts' rows (a reader sees
        the blob or ``None``, never a head without its parts). What a removal of the node
        the blob belongs to does (an ingest target's records). Why (helper leftovers77;
        leftovers76's open item): such a record was overwritten with ``b""``, so every
        folder or file ever added and removed kept a head row in the collection for good."""
        check_state_key(key)
        head = old_head(lambda: self._blob_head(key))
        self._req("delete state", self._collection.delete, {"ids": ["s" + uri_key(key)]})
        if head is not None and head.parts:
            self._delete_parts(key, head.gen, head.parts)

    def _delete_parts(self, key: str, gen: str, n: int) -> None:
        """Delete the ``n`` part rows of ``key`` 's generation ``gen``, a write's batch at a
        time: what a blob's rewrite (its old generation) and its removal both drop."""
        stale = [_part_id(key, gen, i) for i in range(n)]
        for start in range(0, len(stale), MAX_WRITE_ROWS):
            self._req(
                "delete state",
                self._collection.delete,
                {"ids": stale[start : start + MAX_WRITE_ROWS]},
            )

    def _state_row(self, row_id: str, text: str) -> dict[str, Any]:
        # A vector is mandatory in every row; state rows carry a constant unit vector and are
        # excluded from node reads by ``kind``.
        vec = [0.0] * self._dim
        vec[0] = 1.0
        return {
            F_ID: row_id,
            F_KIND: KIND_STATE,
            F_NODE: text,
            F_VECTOR: vec,
            F_SORT_KEY: sort_key(row_id[1:]),
        }

    def _blob_head(self, key: str) -> BlobHead | None:
        head_id = "s" + uri_key(key)
        row = dict(self._fetch_rows([head_id])).get(head_id)
        if row is None:
            return None
        try:
            head = json.loads(str(row.get(F_NODE) or "{}"))
        except (ValueError, RecursionError):  # RecursionError: nesting past the limit
            head = None
        if not isinstance(head, dict):
            raise DamagedHead(f"state {key!r}: its head row is damaged (not a JSON object)")
        if "inline" in head:
            return checked_head(key, inline=head["inline"], sha256=head.get("sha256"))
        return checked_head(
            key, gen=head.get("gen"), parts=head.get("parts"), sha256=head.get("sha256")
        )

    def _get_blob(self, key: str) -> bytes | None:
        head = self._blob_head(key)
        if head is None:
            return None

        def get_parts(gen: str, n: int) -> list[bytes | None]:
            ids = [_part_id(key, gen, i) for i in range(n)]
            rows = dict(self._fetch_rows(ids))
            return [
                base64.b64decode(str(rows[i].get(F_NODE) or "")) if i in rows else None for i in ids
            ]

        return read_blob(key, head, get_parts)

    def _put_blob(self, key: str, value: bytes) -> None:
        """Write a blob through :func:`~treehop.stores._state_blobs.write_blob`: a reader
        sees the old blob or the new one, never a mix."""

        def put_parts(gen: str, parts: Sequence[bytes]) -> None:
            rows = [
                self._state_row(_part_id(key, gen, i), base64.b64encode(c).decode("ascii"))
                for i, c in enumerate(parts)
            ]
            for start in range(0, len(rows), 10):
                self._req(
                    "upsert state", self._collection.upsert, {"data": rows[start : start + 10]}
                )

        def put_head(head: BlobHead) -> None:
            doc: dict[str, Any] = {"key": key, "size": len(value), "sha256": head.sha256}
            if head.inline is not None:
                doc["inline"] = base64.b64encode(head.inline).decode("ascii")
            else:
                doc.update(gen=head.gen, parts=head.parts)
            row = self._state_row("s" + uri_key(key), json.dumps(doc))
            self._req("upsert state", self._collection.upsert, {"data": [row]})

        write_blob(
            value,
            STATE_PART_BYTES,
            old_head(lambda: self._blob_head(key)),
            put_parts=put_parts,
            put_head=put_head,
            delete_parts=lambda gen, n: self._delete_parts(key, gen, n),
        )

    def save(self) -> None:
        """Nodes persist on write; only :attr:`meta` is written here, and only if it changed."""
        current = json.dumps(self._meta, sort_keys=True)
        if current != self._saved_meta:
            self._put_blob(_META_STATE, current.encode("utf-8"))
            self._saved_meta = current


def _part_id(key: str, gen: str, i: int) -> str:
    return "p" + uri_key(f"{key}\x00{gen}\x00{i}")


def _cosine(q: np.ndarray[Any, Any], qn: float, vec: Any) -> float:
    """The cosine of ``q`` and a vector a search answer carries. A vector that is not
    ``q``'s width of finite numbers is a :class:`StoreError`: a row answered with ``{}``
    escaped a raw ``TypeError`` from ``search``, one with ``1e400`` (infinite as float)
    scored NaN, and a wrong width a raw ``ValueError`` from ``np.dot``. The vector is
    scaled to its largest value first (a cosine does not depend on scale): finite values
    whose squares overflow float32 (``3e38``) made an infinite norm and a NaN score, ones
    whose squares underflow (``1e-30``) a zero norm and a score of 0."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):  # (inf is refused below)
            v = np.asarray(vec, dtype=np.float32).reshape(-1)
    except (TypeError, ValueError, OverflowError):
        raise StoreError("VikingDB search: a row's vector is not a list of numbers") from None
    if v.shape != q.shape or not np.isfinite(v).all():
        raise StoreError(
            f"VikingDB search: a row's vector has {v.size} values, expected {q.size} finite ones"
        )
    top = float(np.abs(v).max()) if v.size else 0.0
    if qn == 0 or top == 0:
        return 0.0
    v = v / np.float32(top)
    return float(np.dot(q, v) / (qn * float(np.linalg.norm(v))))
