"""A hostile HTTP server on 127.0.0.1 that misbehaves in one chosen way, over a raw socket.

``http.server`` cannot trickle a response byte by byte, reset a connection or hang before the
status line, so this fake speaks HTTP/1.1 by hand. Each connection reads one request (headers
and ``Content-Length`` body) and then, by :attr:`FaultServer.mode`:

========================  ====================================================================
``status500``             500 whose body and ``X-Echo`` header repeat the request's credentials
``status429``             429 with ``Retry-After: 0`` (and the credentials echoed)
``echo401``               401 "invalid key" page quoting the ``Authorization`` header in full
``hang``                  reads the request, then sends nothing until the server stops
``trickle``               a 200 whose body arrives one byte every ``trickle_s`` seconds
``trickle_headers``       the status line and headers themselves arrive one byte at a time
``reset``                 closes the socket with ``SO_LINGER 0`` (a TCP reset) before answering
``malformed``             200 ``application/json`` whose body is not JSON (and echoes the key)
``html``                  200 ``text/html`` error page from a "proxy" (echoing the key)
``wrong_len``             200 with a well-formed answer of the wrong size (``bodies["wrong_len"]``)
``nan``                   200 with NaN / Infinity numbers (``bodies["nan"]``, raw JSON text)
``huge``                  200 declaring a 10 GB ``Content-Length`` (then a trickle of bytes)
``endless``               200 ``chunked`` JSON that never ends (64 KB every 5 ms, ~13 MB/s)
========================  ====================================================================

``bodies`` maps a mode to the raw body text for protocol-specific answers, or to a function of
the request body (so an answer can be sized to the request). Every request's
headers are recorded, so a test can check what credentials the client actually sent.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable
from typing import Self

Body = str | Callable[[bytes], str]

MODES = (
    "status500",
    "status429",
    "echo401",
    "hang",
    "trickle",
    "trickle_headers",
    "reset",
    "malformed",
    "html",
    "wrong_len",
    "nan",
    "huge",
    "endless",
)


class FaultServer:
    def __init__(self, mode: str, bodies: dict[str, Body] | None = None, trickle_s: float = 0.1):
        if mode not in MODES:
            raise ValueError(f"unknown fault mode {mode!r}")
        self.mode = mode
        self.bodies = dict(bodies or {})
        self.trickle_s = trickle_s
        self.requests: list[dict[str, str]] = []
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def address(self) -> str:
        assert self._sock is not None
        host, port = self._sock.getsockname()[:2]
        return f"{host}:{port}"

    @property
    def base_url(self) -> str:
        return f"http://{self.address}"

    def start(self) -> Self:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._sock.settimeout(0.05)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._sock is not None:
            self._sock.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- serving ------------------------------------------------------------------------------

    def _serve(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._handle_conn, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket) -> tuple[dict[str, str], bytes] | None:
        conn.settimeout(5)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        headers: dict[str, str] = {}
        for line in head.decode("latin-1").split("\r\n")[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        length = int(headers.get("content-length", "0") or 0)
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                break
            body += chunk
        with self._lock:
            self.requests.append(headers)
        return headers, body

    def _handle_conn(self, conn: socket.socket) -> None:
        try:
            while not self._stop.is_set():
                got = self._read_request(conn)
                if got is None:
                    return
                if not self._answer(conn, *got):
                    return
        except OSError:
            return
        finally:
            with contextlib.suppress(OSError):
                conn.close()

    def _body(self, mode: str, request_body: bytes) -> str:
        body = self.bodies[mode]
        return body if isinstance(body, str) else body(request_body)

    def _answer(self, conn: socket.socket, headers: dict[str, str], request_body: bytes) -> bool:
        """Send one answer; False when the connection must not be reused."""
        creds = " ".join(
            f"{k}={v}"
            for k, v in headers.items()
            if k in ("authorization", "x-api-key", "x-security-token", "api-key")
        )
        mode = self.mode
        if mode == "hang":
            self._stop.wait()
            return False
        if mode == "reset":
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return False
        if mode == "status500":
            return self._send(conn, 500, f'{{"error": "internal error for {creds}"}}', creds)
        if mode == "status429":
            extra = {"Retry-After": "0"}
            return self._send(conn, 429, f'{{"error": "slow down {creds}"}}', creds, extra)
        if mode == "echo401":
            body = (
                '{"error": {"message": "Incorrect API key provided: '
                + creds.replace('"', "'")
                + '", "type": "invalid_request_error"}}'
            )
            return self._send(conn, 401, body, creds)
        if mode == "malformed":
            return self._send(conn, 200, '{"data": [{"embedding": [0.1, ' + creds, creds)
        if mode == "html":
            page = f"<html><body><h1>502 Bad Gateway</h1><p>upstream rejected {creds}</p>"
            return self._send(conn, 200, page + "</body></html>", creds, ctype="text/html")
        if mode in ("wrong_len", "nan"):
            return self._send(conn, 200, self._body(mode, request_body), creds)
        if mode == "trickle":
            body = (self._body("ok", request_body) if "ok" in self.bodies else "{}") + " " * 400
            head = (
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body.encode())}\r\n\r\n"
            )
            conn.sendall(head.encode())
            for b in body.encode():
                if self._stop.wait(self.trickle_s):
                    return False
                conn.sendall(bytes([b]))
            return False
        if mode == "huge":
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: 10000000000\r\n\r\n{"
            )
            while not self._stop.wait(self.trickle_s):
                conn.sendall(b" ")
            return False
        if mode == "endless":
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
            )
            chunk = b"[" + b"0," * 32767
            frame = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
            while not self._stop.wait(0.005):
                conn.sendall(frame)
            return False
        if mode == "trickle_headers":
            head = "HTTP/1.1 200 OK\r\n" + "X-Pad: " + "a" * 400 + "\r\n"
            for b in head.encode():
                if self._stop.wait(self.trickle_s):
                    return False
                conn.sendall(bytes([b]))
            return False
        raise AssertionError(mode)  # pragma: no cover

    def _send(
        self,
        conn: socket.socket,
        status: int,
        body: str,
        echo: str,
        extra: dict[str, str] | None = None,
        ctype: str = "application/json",
    ) -> bool:
        data = body.encode("utf-8")
        lines = [
            f"HTTP/1.1 {status} X",
            f"Content-Type: {ctype}",
            f"Content-Length: {len(data)}",
            f"X-Echo: {echo}",
        ]
        lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
        conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + data)
        return True
