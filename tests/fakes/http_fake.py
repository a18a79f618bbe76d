"""A real HTTP server on 127.0.0.1 for faking providers: records requests, sees disconnects.

Each fake (OpenAI, Bedrock) subclasses `FakeServer` and implements `handle(exchange)`.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit


@dataclass
class RecordedRequest:
    """One request as the fake received it."""

    method: str
    path: str  # decoded, without the query string
    headers: dict[str, str]  # names lower-cased
    body: bytes
    query: dict[str, str] = field(default_factory=dict)  # the query string's parameters
    operation: str = ""  # what the fake took it for: "chat", "embeddings", "Converse", ...
    model: str | None = None
    disconnected: threading.Event = field(default_factory=threading.Event)

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class ClientGone(Exception):
    """The client closed the connection while the fake was answering."""


class Exchange:
    """The fake's side of one request: read what came, write the answer."""

    def __init__(self, handler: BaseHTTPRequestHandler, request: RecordedRequest) -> None:
        self._handler = handler
        self.request = request
        self._chunked = False

    # -- plain answers -----------------------------------------------------------------

    def send(
        self,
        status: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        h = self._handler
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.end_headers()
        self._write(body)

    def send_json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
        self.send(status, json.dumps(value).encode(), "application/json", headers)

    # -- streamed answers --------------------------------------------------------------

    def start_stream(self, content_type: str, headers: dict[str, str] | None = None) -> None:
        h = self._handler
        h.send_response(200)
        h.send_header("Content-Type", content_type)
        h.send_header("Transfer-Encoding", "chunked")
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.end_headers()
        self._flush()
        self._chunked = True

    def write_chunk(self, data: bytes) -> None:
        if data:
            self._write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def end_stream(self) -> None:
        self._write(b"0\r\n\r\n")

    def hang_up(self) -> None:
        """Drop the connection in the middle of the body (no final chunk): a network cut."""
        self._handler.close_connection = True
        try:
            self._handler.wfile.flush()
            self._handler.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    # -- waiting -----------------------------------------------------------------------

    def wait_for_disconnect(self, stop: threading.Event) -> None:
        """Block until the client closes its end (or the server stops); records the disconnect."""
        sock: socket.socket = self._handler.connection
        while not stop.is_set():
            readable, _, _ = select.select([sock], [], [], 0.05)
            if not readable:
                continue
            try:
                data = sock.recv(1, socket.MSG_PEEK)
            except OSError:
                data = b""
            if not data:
                self.request.disconnected.set()
                self._handler.close_connection = True
                raise ClientGone
            # the client sent more (a pipelined request?): keep waiting for the close
            time.sleep(0.01)

    def pause(self, seconds: float, stop: threading.Event) -> None:
        stop.wait(seconds)

    # -- low level ---------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        try:
            self._handler.wfile.write(data)
            self._flush()
        except OSError as exc:
            self.request.disconnected.set()
            self._handler.close_connection = True
            raise ClientGone from exc

    def _flush(self) -> None:
        self._handler.wfile.flush()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        request = RecordedRequest(
            method=self.command,
            path=unquote(parts.path),
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            query=dict(parse_qsl(parts.query)),
        )
        exchange = Exchange(self, request)
        fake = self.server.fake
        try:
            fake.handle(exchange)
        except ClientGone:
            pass
        finally:
            fake._record_done(request)

    do_GET = _serve
    do_POST = _serve


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    fake: FakeServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # a client hanging up (a timeout, a cancel) is what some tests are about
        super().handle_error(request, client_address)


class FakeServer:
    """Start with `start()` (or as a context manager); every request is kept in `requests`."""

    def __init__(self) -> None:
        self._http = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._http.fake = self
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.stopping = threading.Event()
        self._lock = threading.Condition()
        self.requests: list[RecordedRequest] = []
        self._finished = 0

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- recording ---------------------------------------------------------------------

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)
            self._lock.notify_all()

    def _record_done(self, request: RecordedRequest) -> None:
        with self._lock:
            self._finished += 1
            self._lock.notify_all()

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> bool:
        """True once at least `count` requests have arrived (waits on a condition, no sleep)."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self.requests) >= count, timeout)

    def wait_for_disconnect(self, timeout: float = 10.0, index: int = -1) -> bool:
        """True once the client of request `index` (default: the latest) has hung up."""
        if not self.wait_for_requests(1 if index < 0 else index + 1, timeout):
            return False
        with self._lock:
            request = self.requests[index]
        return request.disconnected.wait(timeout)

    def handle(self, exchange: Exchange) -> None:  # pragma: no cover - subclasses answer
        raise NotImplementedError
