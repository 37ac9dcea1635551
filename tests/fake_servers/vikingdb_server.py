"""A fake VikingDB on 127.0.0.1: the vector data plane (V2) and the knowledge-base search.

It speaks the documented routes and JSON shapes over real HTTP so that the official
``vikingdb-python-sdk`` client -- the code path production uses -- is what talks to it:

* ``GET /api/vikingdb/Ping`` (the vector client's constructor pings it, unsigned);
* ``POST /api/vikingdb/data/{upsert,update,delete,fetch_in_collection,fetch_in_index,agg}`` and
  ``/api/vikingdb/data/search/{vector,scalar}``: ``{"code": "Success", "result": ...}`` on
  success, a non-200 status with a *string* code (``NotFound.VikingdbCollection``,
  ``InvalidParameter``, ``Unauthorized``) on failure;
* ``POST /api/knowledge/collection/search_knowledge``: an *integer* code (``0``, ``1000001``,
  ``1000002``, ``1000003``, ``1000005``), results under ``data.result_list``.

Every POST must carry a valid Volcengine V4 signature (service ``vikingdb`` for the vector API,
``air`` for the knowledge API), verified here with an implementation of the documented
algorithm (``fake_servers.rerank_servers.expected_signature``), not with the SDK. The filter DSL
(``must`` / ``must_not`` / ``range`` / ``range_out`` / ``and`` / ``or``, on scalar and list
fields) is evaluated here too, only on scalar-indexed fields, and searches are exact cosine
(plus ``dense_weight`` mixing with sparse vectors on a ``hnsw_hybrid`` index).

Behaviour worth knowing:

* ``index_lag_s`` delays when a write becomes visible to index reads (search, scans, counts,
  ``fetch_in_index``), like the real service (~10-20 s); ``fetch_in_collection`` is immediate.
  :meth:`FakeVikingDB.flush_index` makes everything visible at once.
* a field missing from an upserted row gets VikingDB's documented default (``"default"``,
  ``0``, ``false``, ``["default"]``), which a naive ``must`` filter would match.
* :meth:`FakeVikingDB.script` queues raw replies (status, body, delay) consumed one per POST
  before normal handling: 5xx, 429, malformed bodies, slow answers.
* ``range_out`` follows the documented example (``{"gt": 500, "lt": 100}`` selects prices below
  100 or above 500): a value satisfying any one of the given bounds.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fake_servers._http_base import FakeHTTPServer, RecordedRequest, Reply
from fake_servers.rerank_servers import overlap_score
from fake_servers.volc_auth import AUTH, verify_v4

Recorded = RecordedRequest  # the name the tests of this fake have used
SCALAR_TYPES = {"string", "int64", "float32", "bool", "list<string>", "list<int64>"}
DEFAULTS: dict[str, Any] = {
    "string": "default",
    "int64": 0,
    "float32": 0.0,
    "bool": False,
    "list<string>": ["default"],
    "list<int64>": [0],
    "text": "",
    "sparse_vector": {},
}
MAX_STRING_BYTES = 256
MAX_LIST_ITEMS = 32
MAX_ROWS = 100
MAX_SEARCH_LIMIT = 5000


class ApiError(Exception):
    def __init__(self, status: int, code: Any, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _bad(message: str) -> ApiError:
    return ApiError(400, "InvalidParameter", message)


# ------------------------------------------------------------------------------------------
# Filter DSL
# ------------------------------------------------------------------------------------------
_BOUNDS = ("gt", "gte", "lt", "lte")


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _bound_ok(value: float, b: str, x: float) -> bool:
    return {
        "gt": value > x,
        "gte": value >= x,
        "lt": value < x,
        "lte": value <= x,
    }[b]


def check_filter(f: Any, allowed: Callable[[str], bool], error: Callable[[str], Exception]) -> None:
    """Reject a filter that is malformed or uses a field that is not scalar-indexed."""
    if not isinstance(f, dict):
        raise error("filter must be an object")
    op = f.get("op")
    if op in ("and", "or"):
        conds = f.get("conds")
        if not isinstance(conds, list) or not conds:
            raise error(f"{op} needs a non-empty conds list")
        for c in conds:
            check_filter(c, allowed, error)
        return
    if op not in ("must", "must_not", "range", "range_out"):
        raise error(f"unknown filter op {op!r}")
    name = f.get("field")
    if not isinstance(name, str) or not allowed(name):
        raise error(f"filter field {name!r} is not a scalar index field")
    if op in ("must", "must_not"):
        if not isinstance(f.get("conds"), list):
            raise error(f"{op} needs a conds list")
        return
    if "center" in f or "radius" in f:
        raise error("geo ranges are not supported by this fake")
    if not any(b in f for b in _BOUNDS) or not all(_num(f[b]) for b in _BOUNDS if b in f):
        raise error(f"{op} needs numeric bounds")


def eval_filter(f: Mapping[str, Any], get: Callable[[str], Any]) -> bool:
    op = f["op"]
    if op == "and":
        return all(eval_filter(c, get) for c in f["conds"])
    if op == "or":
        return any(eval_filter(c, get) for c in f["conds"])
    value = get(f["field"])
    if op in ("must", "must_not"):
        conds = f["conds"]
        hit = any(v in conds for v in value) if isinstance(value, list) else value in conds
        return hit if op == "must" else not hit
    if not _num(value):
        return False
    bounds = [(b, f[b]) for b in _BOUNDS if b in f]
    if op == "range":
        return all(_bound_ok(value, b, x) for b, x in bounds)
    return any(_bound_ok(value, b, x) for b, x in bounds)  # range_out, as documented


# ------------------------------------------------------------------------------------------
# Vector collections
# ------------------------------------------------------------------------------------------
@dataclass
class FakeIndex:
    name: str
    scalar: set[str]
    hybrid: bool


@dataclass
class FakeCollection:
    name: str
    project: str
    resource_id: str
    fields: dict[str, str]
    primary_key: str
    dim: int
    indexes: dict[str, FakeIndex] = field(default_factory=dict)
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    log: list[tuple[float, str, dict[str, Any] | None]] = field(default_factory=list)

    def vector_field(self) -> str:
        return next(n for n, t in self.fields.items() if t == "vector")

    def sparse_field(self) -> str | None:
        return next((n for n, t in self.fields.items() if t == "sparse_vector"), None)


@dataclass
class KnowledgePoint:
    """One chunk of a fake knowledge base."""

    doc_id: str
    chunk_id: int
    content: str
    chunk_title: str = ""
    doc_name: str = ""
    doc_meta: dict[str, Any] = field(default_factory=dict)
    attachments: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class FakeKnowledgeBase:
    name: str
    project: str
    resource_id: str
    points: list[KnowledgePoint]
    filter_fields: set[str]


def _validate_value(ftype: str, name: str, v: Any, dim: int) -> Any:
    def err() -> ApiError:
        return _bad(f"field {name!r}: value {str(v)[:60]!r} does not match type {ftype}")

    if ftype == "string":
        if not isinstance(v, str):
            raise err()
        if len(v.encode()) > MAX_STRING_BYTES:
            raise _bad(f"field {name!r}: string longer than {MAX_STRING_BYTES} bytes")
    elif ftype == "int64":
        if not isinstance(v, int) or isinstance(v, bool):
            raise err()
    elif ftype == "float32":
        if not _num(v):
            raise err()
        v = float(v)
    elif ftype == "bool":
        if not isinstance(v, bool):
            raise err()
    elif ftype in ("list<string>", "list<int64>"):
        if not isinstance(v, list):
            raise err()
        if len(v) > MAX_LIST_ITEMS:
            raise _bad(f"field {name!r}: list longer than {MAX_LIST_ITEMS}")
        for x in v:
            _validate_value(ftype[5:-1], name, x, dim)
    elif ftype == "text":
        if not isinstance(v, str):
            raise err()
    elif ftype == "vector":
        if not isinstance(v, list) or len(v) != dim or not all(_num(x) for x in v):
            raise _bad(f"field {name!r}: a vector of dimension {dim} is required")
    elif ftype == "sparse_vector" and (
        not isinstance(v, dict) or not all(isinstance(k, str) and _num(x) for k, x in v.items())
    ):
        raise err()
    return v


def _cos(a: Sequence[float], b: Sequence[float]) -> float:
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    if na == 0 or nb == 0:
        return 0.0
    return sum(x * y for x, y in zip(a, b, strict=True)) / (na * nb)


class FakeVikingDB(FakeHTTPServer):
    """The fake service. Use as a context manager; ``host`` is ``127.0.0.1:PORT``."""

    def __init__(
        self,
        *,
        ak: str,
        sk: str,
        region: str = "cn-beijing",
        index_lag_s: float = 0.0,
        max_skew_s: float = 900.0,
    ) -> None:
        super().__init__()
        self.ak, self.sk, self.region = ak, sk, region
        self.index_lag_s = index_lag_s
        self.max_skew_s = max_skew_s
        self.forbidden_aks: set[str] = set()
        self.fail_ping = False
        self.collections: dict[str, FakeCollection] = {}
        self.knowledge: dict[str, FakeKnowledgeBase] = {}
        self.auth_failures: list[str] = []
        self.pings = 0

    # -- setup ------------------------------------------------------------------------------
    def create_collection(
        self,
        name: str,
        schema: Mapping[str, Any],
        *,
        project: str = "default",
        resource_id: str | None = None,
    ) -> FakeCollection:
        """Create a collection and its index from :func:`collection_schema`'s shape."""
        fields = {f["field_name"]: f["field_type"] for f in schema["fields"]}
        pk = next(f["field_name"] for f in schema["fields"] if f.get("is_primary_key"))
        dim = next(int(f["dim"]) for f in schema["fields"] if f["field_type"] == "vector")
        coll = FakeCollection(name, project, resource_id or f"vdb-{name}", fields, pk, dim)
        idx = schema["index"]
        for s in idx["scalar_index"]:
            if fields.get(s) not in SCALAR_TYPES:
                raise ValueError(f"{s} cannot be a scalar index field")
        coll.indexes[idx["index_name"]] = FakeIndex(
            idx["index_name"],
            set(idx["scalar_index"]),
            idx["vector_index"]["index_type"] == "hnsw_hybrid",
        )
        with self._lock:
            self.collections[name] = coll
        return coll

    def add_knowledge_base(
        self,
        name: str,
        points: Sequence[KnowledgePoint],
        *,
        project: str = "default",
        resource_id: str | None = None,
        filter_fields: Sequence[str] = ("doc_id",),
    ) -> FakeKnowledgeBase:
        kb = FakeKnowledgeBase(
            name, project, resource_id or f"kb-{name}", list(points), set(filter_fields)
        )
        with self._lock:
            self.knowledge[name] = kb
        return kb

    def flush_index(self) -> None:
        """Make every write visible to index reads now."""
        with self._lock:
            for coll in self.collections.values():
                coll.log = [(t - 1e9, i, r) for t, i, r in coll.log]

    def posts(self, suffix: str = "") -> list[Recorded]:
        return [r for r in self.requests if r.method == "POST" and r.path.endswith(suffix)]

    # -- lifecycle --------------------------------------------------------------------------
    @property
    def host(self) -> str:
        """``127.0.0.1:PORT``, what the SDK clients take."""
        return self.address

    def answer_get(self, req: Recorded) -> Reply:
        if req.path.split("?")[0] == "/api/vikingdb/Ping" and not self.fail_ping:
            self.pings += 1
            return Reply(200, {"code": "Success", "message": "pong"})
        return Reply(503, {"code": "ServiceUnavailable", "message": "down"})

    # -- auth -------------------------------------------------------------------------------
    def verify(self, req: Recorded, service: str) -> str | None:
        return verify_v4(
            req,
            ak=self.ak,
            sk=self.sk,
            region=self.region,
            service=service,
            max_skew_s=self.max_skew_s,
        )

    # -- dispatch ---------------------------------------------------------------------------
    def answer(self, req: Recorded) -> Reply:
        path = req.path.partition("?")[0]
        knowledge = path.startswith("/api/knowledge/")
        try:
            problem = self.verify(req, "air" if knowledge else "vikingdb")
            if problem is not None:
                self.auth_failures.append(problem)
                raise ApiError(401, 1000001 if knowledge else "Unauthorized", "unauthorized")
            m = AUTH.match(req.headers["authorization"])
            assert m is not None
            if m["ak"] in self.forbidden_aks:
                raise ApiError(403, 1000002 if knowledge else "Forbidden", "no permission")
            try:
                body = json.loads(req.raw)
            except ValueError as exc:
                raise _bad("body is not JSON") from exc
            if not isinstance(body, dict):
                raise _bad("body must be an object")
            if knowledge:
                if path != "/api/knowledge/collection/search_knowledge":
                    raise ApiError(404, 1000003, f"no route {path}")
                data = self.search_knowledge(body)
                return Reply(
                    200, {"code": 0, "message": "success", "request_id": "fake-kb", "data": data}
                )
            handler = {
                "/api/vikingdb/data/upsert": self.upsert,
                "/api/vikingdb/data/update": self.update,
                "/api/vikingdb/data/delete": self.delete,
                "/api/vikingdb/data/fetch_in_collection": self.fetch_in_collection,
                "/api/vikingdb/data/fetch_in_index": self.fetch_in_index,
                "/api/vikingdb/data/search/vector": self.search_vector,
                "/api/vikingdb/data/search/scalar": self.search_scalar,
                "/api/vikingdb/data/agg": self.aggregate,
            }.get(path)
            if handler is None:
                raise ApiError(404, "NotFound.Api", f"no route {path}")
            with self._lock:
                result = handler(body)
            return Reply(
                200,
                {
                    "code": "Success",
                    "message": "The API call was executed successfully.",
                    "request_id": "fake-req",
                    "api": path,
                    "result": result,
                },
            )
        except ApiError as exc:
            if knowledge:
                code = exc.code if isinstance(exc.code, int) else 1000003
                return Reply(
                    exc.status, {"code": code, "message": exc.message, "request_id": "fake-kb"}
                )
            return Reply(
                exc.status,
                {
                    "code": exc.code,
                    "message": exc.message,
                    "request_id": "fake-req",
                    "result": None,
                },
            )

    # -- vector data plane ------------------------------------------------------------------
    def _collection(self, body: Mapping[str, Any]) -> FakeCollection:
        name, rid = body.get("collection_name"), body.get("resource_id")
        for c in self.collections.values():
            if (name and c.name == name) or (rid and c.resource_id == rid):
                if body.get("project_name") not in (None, c.project):
                    break
                return c
        if not name and not rid:
            raise ApiError(400, "MissingParameter", "collection_name or resource_id is required")
        raise ApiError(
            404,
            "NotFound.VikingdbCollection",
            f"The specified collection '{name or rid}' of VikingDB does not exist.",
        )

    def _index(self, body: Mapping[str, Any]) -> tuple[FakeCollection, FakeIndex]:
        coll = self._collection(body)
        name = body.get("index_name")
        if name not in coll.indexes:
            raise ApiError(
                404, "NotFound.VikingdbIndex", f"The specified index '{name}' does not exist."
            )
        return coll, coll.indexes[name]

    def _index_view(self, coll: FakeCollection) -> dict[str, dict[str, Any]]:
        if self.index_lag_s <= 0:
            return coll.rows
        now = time.monotonic()
        view: dict[str, dict[str, Any]] = {}
        for t, i, row in coll.log:
            if t + self.index_lag_s > now:
                continue
            if row is None:
                view.pop(i, None)
            else:
                view[i] = row
        return view

    def _write(self, coll: FakeCollection, i: str, row: dict[str, Any] | None) -> None:
        if row is None:
            coll.rows.pop(i, None)
        else:
            coll.rows[i] = row
        coll.log.append((time.monotonic(), i, row))

    def _rows_arg(self, body: Mapping[str, Any]) -> list[dict[str, Any]]:
        data = body.get("data")
        if not isinstance(data, list) or not data:
            raise _bad("data must be a non-empty list")
        if len(data) > MAX_ROWS:
            raise _bad(f"at most {MAX_ROWS} rows per request")
        if not all(isinstance(r, dict) for r in data):
            raise _bad("every row must be an object")
        return data

    def upsert(self, body: Mapping[str, Any]) -> Any:
        coll = self._collection(body)
        new: list[tuple[str, dict[str, Any]]] = []
        for row in self._rows_arg(body):
            pk = row.get(coll.primary_key)
            if not isinstance(pk, str) or not pk:
                raise _bad(f"row without primary key {coll.primary_key!r}")
            out: dict[str, Any] = {}
            for name, v in row.items():
                ftype = coll.fields.get(name)
                if ftype is None:
                    if body.get("ignore_unknown_fields"):
                        continue
                    raise _bad(f"unknown field {name!r}")
                out[name] = _validate_value(ftype, name, v, coll.dim)
            for name, ftype in coll.fields.items():
                if name in out:
                    continue
                if ftype == "vector":
                    raise _bad(f"row {pk!r} has no vector field {name!r}")
                out[name] = json.loads(json.dumps(DEFAULTS[ftype]))
            new.append((pk, out))
        for pk, out in new:
            self._write(coll, pk, out)
        return {"token_usage": {}}

    def update(self, body: Mapping[str, Any]) -> Any:
        coll = self._collection(body)
        changes: list[tuple[str, dict[str, Any]]] = []
        for row in self._rows_arg(body):
            pk = row.get(coll.primary_key)
            if pk not in coll.rows:
                raise _bad(f"data not found: {pk!r}")
            merged = dict(coll.rows[pk])
            for name, v in row.items():
                ftype = coll.fields.get(name)
                if ftype is None:
                    raise _bad(f"unknown field {name!r}")
                merged[name] = _validate_value(ftype, name, v, coll.dim)
            changes.append((str(pk), merged))
        for pk, merged in changes:
            self._write(coll, pk, merged)
        return {"token_usage": {}}

    def delete(self, body: Mapping[str, Any]) -> Any:
        coll = self._collection(body)
        if body.get("del_all"):
            for i in list(coll.rows):
                self._write(coll, i, None)
            return None
        ids = body.get("ids")
        if not isinstance(ids, list) or len(ids) > MAX_ROWS:
            raise _bad(f"ids must be a list of at most {MAX_ROWS}")
        for i in ids:
            if i in coll.rows:
                self._write(coll, i, None)
        return None

    @staticmethod
    def _scalar_fields(coll: FakeCollection, row: Mapping[str, Any]) -> dict[str, Any]:
        return {
            k: v for k, v in row.items() if coll.fields.get(k) not in ("vector", "sparse_vector")
        }

    def _ids_arg(self, body: Mapping[str, Any]) -> list[str]:
        ids = body.get("ids")
        if not isinstance(ids, list) or not ids or len(ids) > MAX_ROWS:
            raise _bad(f"ids must be a non-empty list of at most {MAX_ROWS}")
        return ids

    def fetch_in_collection(self, body: Mapping[str, Any]) -> Any:
        coll = self._collection(body)
        items, missing = [], []
        for i in self._ids_arg(body):
            row = coll.rows.get(i)
            if row is None:
                missing.append(i)
            else:
                items.append({"id": i, "fields": self._scalar_fields(coll, row)})
        return {"fetch": items, "ids_not_exist": missing}

    def _output(
        self, coll: FakeCollection, row: Mapping[str, Any], output_fields: Any
    ) -> dict[str, Any]:
        if output_fields is None:
            return self._scalar_fields(coll, row)
        if not isinstance(output_fields, list) or any(f not in coll.fields for f in output_fields):
            raise _bad(f"output_fields must name fields of the collection: {output_fields!r}")
        return {f: row[f] for f in output_fields}

    def fetch_in_index(self, body: Mapping[str, Any]) -> Any:
        coll, _ = self._index(body)
        view = self._index_view(coll)
        vf = coll.vector_field()
        items, missing = [], []
        for i in self._ids_arg(body):
            row = view.get(i)
            if row is None:
                missing.append(i)
                continue
            items.append(
                {
                    "id": i,
                    "fields": self._output(coll, row, body.get("output_fields")),
                    "dense_vector": row[vf],
                    "dense_dim": coll.dim,
                }
            )
        return {"fetch": items, "ids_not_exist": missing}

    def _filtered(
        self, coll: FakeCollection, index: FakeIndex, body: Mapping[str, Any]
    ) -> list[tuple[str, dict[str, Any]]]:
        f = body.get("filter")
        view = self._index_view(coll)
        if f is None:
            return list(view.items())
        check_filter(f, lambda n: n in index.scalar, _bad)
        return [(i, r) for i, r in view.items() if eval_filter(f, r.get)]

    @staticmethod
    def _window(body: Mapping[str, Any]) -> tuple[int, int]:
        limit, offset = body.get("limit", 10), body.get("offset", 0)
        if not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise _bad(f"limit must be in [1, {MAX_SEARCH_LIMIT}]")
        if not isinstance(offset, int) or offset < 0:
            raise _bad("offset must be >= 0")
        return limit, offset

    def search_vector(self, body: Mapping[str, Any]) -> Any:
        coll, index = self._index(body)
        q = body.get("dense_vector")
        if not isinstance(q, list) or len(q) != coll.dim or not all(_num(x) for x in q):
            raise _bad(f"dense_vector must have dimension {coll.dim}")
        limit, offset = self._window(body)
        sparse = body.get("sparse_vector")
        weight = 1.0
        sf = coll.sparse_field()
        if sparse is not None:
            if not index.hybrid or sf is None:
                raise _bad("sparse_vector needs a hnsw_hybrid index")
            if not isinstance(sparse, dict):
                raise _bad("sparse_vector must be an object")
            weight = (body.get("advance") or {}).get("dense_weight", 0.5)
            if not _num(weight) or not 0.2 <= weight <= 1:
                raise _bad("dense_weight must be in [0.2, 1]")
        vf = coll.vector_field()
        scored = []
        for i, row in self._filtered(coll, index, body):
            s = _cos(q, row[vf])
            if sparse is not None and sf is not None:
                doc = row.get(sf) or {}
                lex = sum(w * doc.get(t, 0.0) for t, w in sparse.items())
                s = weight * s + (1 - weight) * lex
            scored.append((s, i, row))
        matched = len(scored)
        scored.sort(key=lambda x: -x[0])
        data = [
            {
                "id": i,
                "fields": self._output(coll, row, body.get("output_fields")),
                "score": s,
                "ann_score": s,
            }
            for s, i, row in scored[offset : offset + limit]
        ]
        return {"data": data, "filter_matched_count": matched, "total_return_count": len(data)}

    def search_scalar(self, body: Mapping[str, Any]) -> Any:
        coll, index = self._index(body)
        name = body.get("field")
        if name not in index.scalar or coll.fields.get(name) not in ("int64", "float32"):
            raise _bad(f"field {name!r} must be an int64/float32 scalar index field")
        order = body.get("order", "desc")
        if order not in ("asc", "desc"):
            raise _bad("order must be asc or desc")
        limit, offset = self._window(body)
        rows = self._filtered(coll, index, body)
        rows.sort(key=lambda x: x[1][name], reverse=order == "desc")
        data = [
            {
                "id": i,
                "fields": self._output(coll, row, body.get("output_fields")),
                "score": float(row[name]),
            }
            for i, row in rows[offset : offset + limit]
        ]
        return {"data": data, "filter_matched_count": len(rows), "total_return_count": len(data)}

    def aggregate(self, body: Mapping[str, Any]) -> Any:
        coll, index = self._index(body)
        if body.get("op") != "count":
            raise _bad("only op=count is supported")
        rows = self._filtered(coll, index, body)
        name = body.get("field") or body.get("group_by")
        if not name:
            return {"op": "count", "field": "__NONE__", "agg": {"__TOTAL__": len(rows)}}
        if name not in index.scalar or coll.fields.get(name) not in ("string", "int64", "bool"):
            raise _bad(f"cannot aggregate on {name!r}")
        counts: dict[str, int] = {}
        for _, r in rows:
            counts[str(r[name])] = counts.get(str(r[name]), 0) + 1
        return {"op": "count", "field": name, "agg": counts}

    # -- knowledge base ---------------------------------------------------------------------
    def search_knowledge(self, body: Mapping[str, Any]) -> Any:
        def bad(msg: str) -> ApiError:
            return ApiError(400, 1000003, f"invalid request: {msg}")

        name, rid = body.get("collection_name") or body.get("name"), body.get("resource_id")
        project = body.get("project") or body.get("project_name") or "default"
        kb = next(
            (
                k
                for k in self.knowledge.values()
                if (rid and k.resource_id == rid)
                or (name and k.name == name and k.project == project)
            ),
            None,
        )
        if kb is None:
            raise ApiError(400, 1000005, "collection not exist")
        query = body.get("query")
        if not isinstance(query, str) or not query:
            raise bad("query is required")
        if len(query) > 8000:
            raise bad("query longer than 8000")
        limit = body.get("limit", 10)
        if not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise bad("limit must be in [1, 1000]")
        dw = body.get("dense_weight", 0.5)
        if not _num(dw) or not 0.2 <= dw <= 1:
            raise bad("dense_weight must be in [0.2, 1]")
        pre = body.get("pre_processing") or {}
        post = body.get("post_processing") or {}
        qp = body.get("query_param") or {}
        rewrite_query = None
        if pre.get("rewrite"):
            msgs = pre.get("messages")
            if not isinstance(msgs, list) or not msgs:
                raise bad("rewrite needs messages")
            last_user = [m["content"] for m in msgs if m.get("role") == "user"]
            rewrite_query = f"{last_user[-1]} {query}" if last_user else query
        search_text = rewrite_query or query
        rerank = bool(post.get("rerank_switch"))
        retrieve = post.get("retrieve_count", 25)
        if rerank and (not isinstance(retrieve, int) or retrieve < limit):
            raise bad("retrieve_count must be >= limit")
        diffusion = post.get("chunk_diffusion_count", 0)
        if not isinstance(diffusion, int) or not 0 <= diffusion <= 5:
            raise bad("chunk_diffusion_count must be in [0, 5]")
        model = post.get("rerank_model", "base-multilingual-rerank")
        threshold = post.get("rerank_threshold")
        if threshold is not None and (not _num(threshold) or not 0 <= threshold <= 1):
            raise bad("rerank_threshold must be in [0, 1]")
        instruction = post.get("rerank_instruction")
        if instruction is not None and len(str(instruction)) > 1024:
            raise bad("rerank_instruction longer than 1024")
        doc_filter = qp.get("doc_filter")
        points = kb.points
        if doc_filter is not None:
            check_filter(doc_filter, lambda n: n in kb.filter_fields, bad)

            def meta(p: KnowledgePoint) -> Callable[[str], Any]:
                return lambda k: p.doc_id if k == "doc_id" else p.doc_meta.get(k)

            points = [p for p in points if eval_filter(doc_filter, meta(p))]
        scored = sorted(
            ((overlap_score(search_text, p.content), p) for p in points), key=lambda x: -x[0]
        )
        hits: list[tuple[float, float | None, KnowledgePoint]]
        if rerank:
            pool = scored[:retrieve]
            only_chunk = bool(post.get("rerank_only_chunk"))

            def rr(p: KnowledgePoint) -> float:
                text = p.content if only_chunk else f"{p.chunk_title}\n{p.content}"
                return round(0.5 * overlap_score(search_text, text) + 0.25, 6)

            hits = sorted(((s, rr(p), p) for s, p in pool), key=lambda x: -(x[1] or 0.0))
            if threshold is not None and model == "doubao-seed-rerank":
                hits = [h for h in hits if (h[1] or 0.0) >= threshold]
        else:
            hits = [(s, None, p) for s, p in scored]
        hits = hits[:limit]
        if diffusion:
            seen = {(p.doc_id, p.chunk_id) for _, _, p in hits}
            out: list[tuple[float, float | None, KnowledgePoint]] = []
            for s, r, p in hits:
                out.append((s, r, p))
                for q in kb.points:
                    key = (q.doc_id, q.chunk_id)
                    near = q.doc_id == p.doc_id and 0 < abs(q.chunk_id - p.chunk_id) <= diffusion
                    if near and key not in seen:
                        seen.add(key)
                        out.append((overlap_score(search_text, q.content), None, q))
            hits = out
        if post.get("chunk_group"):
            best: dict[str, int] = {}
            for i, (_, _, p) in enumerate(hits):
                best.setdefault(p.doc_id, i)
            hits.sort(key=lambda h: (best[h[2].doc_id], h[2].chunk_id))
        result = []
        for s, r, p in hits:
            item: dict[str, Any] = {
                "collection_name": kb.name,
                "point_id": f"{p.doc_id}_{p.chunk_id}",
                "content": p.content,
                "chunk_title": p.chunk_title,
                "chunk_id": p.chunk_id,
                "chunk_type": "text",
                "score": s,
                "process_time": 1700000000,
                "doc_info": {
                    "doc_id": p.doc_id,
                    "doc_name": p.doc_name or p.doc_id,
                    "doc_type": "md",
                    "doc_meta": json.dumps(
                        [{"field_name": k, "field_value": v} for k, v in p.doc_meta.items()]
                    ),
                    "source": "tos_fe",
                    "title": p.doc_name,
                    "create_time": 1700000000,
                    "status": {"process_status": 0},
                },
                "project": kb.project,
                "resource_id": kb.resource_id,
                **p.extra,
            }
            if r is not None:
                item["rerank_score"] = r
            if post.get("get_attachment_link") and p.attachments:
                item["chunk_attachment"] = p.attachments
            result.append(item)
        data: dict[str, Any] = {"count": len(result), "result_list": result}
        if rewrite_query is not None:
            data["rewrite_query"] = rewrite_query
        if pre.get("return_token_usage"):
            data["token_usage"] = {
                "embedding_token_usage": {"prompt_tokens": len(search_text.split())},
                "rerank_token_usage": len(hits) if rerank else 0,
            }
        return data
