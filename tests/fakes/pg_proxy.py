"""A TCP proxy on 127.0.0.1 in front of the test PostgreSQL server that can lose a reply.

Bytes from the client go to the server as they come; the server's answer is read message by
message (PostgreSQL's protocol: a type byte, a 4-byte length, the body), so the proxy can drop
the connection at an exact moment: once armed with `cut_at(b"COMMIT")`, the next
CommandComplete whose tag starts so is not passed on, and both sides are closed. The server
has committed by then; the client only sees its connection break. That is the lost reply of a
server dying or a network dropping just after a commit, made deterministic.

`refusing` closes every new connection at once (a server that does not answer yet);
`unanswered_after_commit` loses a reply while refusing (a change whose outcome cannot be
learned). The `lossy_proxy` fixture (tests/conftest.py) runs one in front of a test database.
The client must connect with `sslmode=disable` and `gssencmode=disable` (see `url`): the
server's answers are then plain messages from the first byte.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Iterator

from psycopg.conninfo import conninfo_to_dict, make_conninfo

COMMAND_COMPLETE = b"C"


def _unix_socket(url: str) -> str:
    """The path of the server's Unix socket named in `url`."""
    parts = conninfo_to_dict(url)
    return f"{parts['host']}/.s.PGSQL.{parts.get('port') or 5432}"


class LossyProxy:
    def __init__(self, server_url: str) -> None:
        self._upstream = _unix_socket(server_url)
        self._server_url = server_url
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()
        self._cut_tag: bytes | None = None
        self._cut_after: bytes | None = None
        self._marked: set[socket.socket] = set()  # connections that sent `_cut_after`
        self.refusing = False
        self.cut = threading.Event()  # set once an armed cut happened
        self._sockets: list[socket.socket] = []
        self._closed = False
        threading.Thread(target=self._accept, name="pg-proxy", daemon=True).start()

    def url(self, url: str) -> str:
        """`url` (a schema's address on the server) by way of this proxy."""
        return make_conninfo(
            url, host="127.0.0.1", port=str(self.port), sslmode="disable", gssencmode="disable"
        )

    def cut_at(self, tag: bytes, *, after: bytes | None = None) -> None:
        """Drop the connection that next gets a CommandComplete starting with `tag`, instead
        of passing that answer on; with `after`, only a connection that sent those bytes
        since (a store's background work commits on connections of its own)."""
        with self._lock:
            self._cut_tag = tag
            self._cut_after = after
            self._marked.clear()
            self.cut.clear()

    @contextlib.contextmanager
    def unanswered_after_commit(self, *, after: bytes | None = None) -> Iterator[None]:
        """Within the block, the next COMMIT's answer is lost (as `cut_at`) and the server
        takes no new connection: a store cannot learn whether its change landed. The server
        answers again once the block ends."""
        self.cut_at(b"COMMIT", after=after)
        self.refusing = True
        try:
            yield
        finally:
            self.refusing = False

    def _take_cut(self, client: socket.socket, tag: bytes) -> bool:
        with self._lock:
            if self._cut_tag is None or not tag.startswith(self._cut_tag):
                return False
            if self._cut_after is not None and client not in self._marked:
                return False
            self._cut_tag = None
            return True

    def _sent(self, client: socket.socket, data: bytes) -> None:
        with self._lock:
            if self._cut_after is not None and self._cut_after in data:
                self._marked.add(client)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if self.refusing:
                client.close()
                continue
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                server.connect(self._upstream)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets += [client, server]
            threading.Thread(target=self._to_server, args=(client, server), daemon=True).start()
            threading.Thread(target=self._to_client, args=(server, client), daemon=True).start()

    def _to_server(self, client: socket.socket, server: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                self._sent(client, data)  # a query arrives whole at this size
                server.sendall(data)
        _close(client, server)

    def _to_client(self, server: socket.socket, client: socket.socket) -> None:
        reader = server.makefile("rb")
        with contextlib.suppress(OSError, ValueError):
            while True:
                head = reader.read(5)
                if len(head) < 5:
                    break
                kind, length = head[:1], struct.unpack("!I", head[1:])[0]
                body = reader.read(length - 4)
                if kind == COMMAND_COMPLETE and self._take_cut(client, body):
                    _close(client, server)
                    self.cut.set()
                    return
                client.sendall(head + body)
        _close(client, server)

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                _close(sock)

    @classmethod
    @contextlib.contextmanager
    def running(cls, server_url: str) -> Iterator[LossyProxy]:
        proxy = cls(server_url)
        try:
            yield proxy
        finally:
            proxy.close()


def _close(*sockets: socket.socket) -> None:
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            sock.close()
