"""A tiny OpenAI-compatible server on 127.0.0.1 that answers `GET /v1/models` (what "Test
connection" and the first-run probe ask), optionally requiring a bearer key."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def model_server(models: list[str], *, key: str | None = None) -> Iterator[str]:
    """Serve until the block ends; yields the base URL (ending in /v1)."""
    requests: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            requests.append(self.path)
            if key is not None and self.headers.get("Authorization") != f"Bearer {key}":
                self._reply(
                    401,
                    {
                        "error": {
                            "message": "Incorrect API key provided",
                            "type": "invalid_request_error",
                            "code": "invalid_api_key",
                        }
                    },
                )
                return
            if self.path.rstrip("/") == "/v1/models":
                data = [{"id": name, "object": "model", "owned_by": "test"} for name in models]
                self._reply(200, {"object": "list", "data": data})
            else:
                self._reply(404, {"error": {"message": "not found"}})

        def _reply(self, status: int, body: object) -> None:
            payload = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
