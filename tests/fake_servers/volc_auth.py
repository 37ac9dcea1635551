"""The Volcengine HMAC-SHA256 V4 signature, checked the way the real services check it.

Implemented from the documented algorithm, independently of the SDK the clients use, so a
client that signs wrongly fails against the fakes (VikingDB data plane, knowledge base, rerank).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import re
from urllib.parse import quote

from fake_servers._http_base import RecordedRequest


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def expected_signature(
    *,
    sk: str,
    method: str,
    path: str,
    query: str,
    headers: dict[str, str],
    signed_headers: list[str],
    body: bytes,
    x_date: str,
    region: str,
    service: str,
) -> str:
    """The Volcengine V4 signature, computed from the documented algorithm (not the SDK).

    canonical request = method, URI-encoded path, sorted query, ``name:value`` lines of the
    signed headers (lower-case names, sorted), the signed header list, hex SHA-256 of the body;
    string to sign = ``HMAC-SHA256``, X-Date, ``date/region/service/request``, hex SHA-256 of
    the canonical request; key = HMAC chain of the secret key over date, region, service,
    ``request``.
    """
    lower = {k.lower(): v for k, v in headers.items()}
    canonical_headers = "".join(f"{name}:{lower[name]}\n" for name in signed_headers)
    canonical = "\n".join(
        [
            method,
            quote(path).replace("%2F", "/"),
            query,
            canonical_headers,
            ";".join(signed_headers),
            hashlib.sha256(body).hexdigest(),
        ]
    )
    date = x_date[:8]
    scope = f"{date}/{region}/{service}/request"
    to_sign = "\n".join(
        ["HMAC-SHA256", x_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = _hmac(_hmac(_hmac(_hmac(sk.encode("utf-8"), date), region), service), "request")
    return hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()


AUTH = re.compile(
    r"^HMAC-SHA256 Credential=(?P<ak>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)"
    r"/request, SignedHeaders=(?P<signed>[^,]+), Signature=(?P<sig>[0-9a-f]{64})$"
)


def verify_v4(
    req: RecordedRequest, *, ak: str, sk: str, region: str, service: str, max_skew_s: float
) -> str | None:
    """``None`` when ``req`` carries a valid signature for this key and scope, else why not."""
    m = AUTH.match(req.headers.get("authorization", ""))
    if m is None:
        return "malformed Authorization header"
    if m["ak"] != ak:
        return "unknown access key"
    if (m["region"], m["service"]) != (region, service):
        return "wrong credential scope"
    x_date = req.headers.get("x-date", "")
    try:
        when = dt.datetime.strptime(x_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return "malformed X-Date"
    if abs((dt.datetime.now(dt.UTC) - when).total_seconds()) > max_skew_s:
        return "X-Date outside the allowed skew"
    if m["date"] != x_date[:8]:
        return "credential date differs from X-Date"
    signed = m["signed"].split(";")
    if signed != sorted(signed) or not set(signed) <= set(req.headers):
        return "signed headers missing or unsorted"
    if not {"x-date", "x-content-sha256"} <= set(signed):
        return "X-Date and X-Content-Sha256 must be signed"
    if req.headers.get("x-content-sha256") != hashlib.sha256(req.raw_body).hexdigest():
        return "body hash mismatch"
    path, _, query = req.path.partition("?")
    want = expected_signature(
        sk=sk,
        method=req.method,
        path=path,
        query=query,
        headers=req.headers,
        signed_headers=signed,
        body=req.raw_body,
        x_date=x_date,
        region=region,
        service=service,
    )
    if not hmac.compare_digest(want, m["sig"]):
        return "signature mismatch"
    return None
