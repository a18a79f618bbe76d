"""Checks that Timothy's parts work on this machine, for `timothy doctor` and `--self-check`."""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import socket
import struct
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw

from timothy import paths
from timothy.settings import Settings


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'}  {self.name}: {self.detail}"


def _run(name: str, probe: Callable[[], str]) -> Check:
    try:
        return Check(name, True, probe())
    except Exception as exc:  # a check reports, it never raises
        return Check(name, False, str(exc) or type(exc).__name__)


@contextlib.contextmanager
def no_network() -> Iterator[None]:
    """Make any attempt to open a network connection in this process fail loudly."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network access attempted while checking offline operation")

    saved = (socket.socket.connect, socket.getaddrinfo, socket.create_connection)
    socket.socket.connect = refuse  # type: ignore[method-assign]
    socket.getaddrinfo = refuse
    socket.create_connection = refuse
    try:
        yield
    finally:
        socket.socket.connect, socket.getaddrinfo, socket.create_connection = saved  # type: ignore[method-assign]


def _probe_sqlite_vec() -> str:
    from timothy.store.db import vec_extension_path

    conn = apsw.Connection(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(vec_extension_path())
    version = conn.execute("SELECT vec_version()").fetchall()[0][0]
    conn.execute("CREATE VIRTUAL TABLE v USING vec0 (e float[3] distance_metric=cosine)")
    for rowid, vector in ((1, (1, 0, 0)), (2, (0, 1, 0)), (3, (0, 0, 1))):
        conn.execute("INSERT INTO v (rowid, e) VALUES (?, ?)", (rowid, struct.pack("3f", *vector)))
    rows = conn.execute(
        "SELECT rowid FROM v WHERE e MATCH ? AND k = 1", (struct.pack("3f", 0.1, 0.9, 0.1),)
    ).fetchall()
    if rows != [(2,)]:
        raise RuntimeError(f"k-NN answered {rows}, expected [(2,)]")
    return f"{version} loaded, k-NN answered"


def _probe_fts5() -> str:
    conn = apsw.Connection(":memory:")
    # The memories' index is contentless with delete (SQLite 3.43 and later).
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5 "
        "(c, content = '', contentless_delete = 1, tokenize = 'porter unicode61')"
    )
    conn.execute(
        "INSERT INTO t (rowid, c) VALUES (1, 'I prefer aisle seats on long flights'), "
        "(2, 'My birthday is in March')"
    )
    conn.execute("DELETE FROM t WHERE rowid = 2")
    rows = conn.execute('SELECT rowid FROM t WHERE t MATCH \'"seat" OR "birthday"\'')
    if rows.fetchall() != [(1,)]:
        raise RuntimeError("a porter-stemmed OR query after a delete did not find one row")
    return f"SQLite {apsw.sqlite_lib_version()}, porter unicode61, contentless delete"


def _probe_encoding() -> str:
    from timothy import tokens

    with no_network():
        count = tokens.count_tokens("Timothy remembers, offline.")
    return f"{tokens.ENCODING_NAME} loaded offline ({count} tokens in a test sentence)"


def _probe_data_dir(folder: Path) -> Callable[[], str]:
    def probe() -> str:
        from timothy.store.db import make_folder

        make_folder(folder)
        probe_file = folder / f".write-check-{uuid.uuid4().hex}"
        probe_file.write_bytes(b"ok")
        probe_file.unlink()
        return f"{folder} is writable"

    return probe


def _probe_database(folder: Path) -> Callable[[], str]:
    def probe() -> str:
        from timothy.store import DamageCheck, Store
        from timothy.store.backup_folder import restore_advice

        # The full integrity_check (every page, every index against its table), in place of
        # the quick one the app runs at start.
        with Store.open(folder, check=DamageCheck.OFF) as store:
            damage = store.db.integrity_check()
            if damage is not None:
                raise RuntimeError(
                    f"{store.path} is DAMAGED ({damage}); Timothy will only read it. To fix "
                    f"it, close Timothy and {restore_advice(store.path)}."
                )
            total = store.memories.count()
            active = store.memories.count(status="active")
            version = store.db.schema_version()
        return (
            f"{store.path} (schema {version}, {total} memories, {active} active, "
            "integrity check passed)"
        )

    return probe


def _server_checks() -> list[Check]:
    """The shared memory server, when TIMOTHY_STORE_URL or the settings choose one: asked
    what it is (PostgreSQL's version, pgvector, what it holds), changing nothing."""
    from timothy.errors import TimothyError
    from timothy.settings import load_settings
    from timothy.store.location import check_server, chosen_location

    section = load_settings().store
    try:
        url = chosen_location(None, section)
    except TimothyError as exc:
        return [Check("memory server", False, str(exc))]
    if url is None:
        return []
    return [
        _run(
            "memory server",
            lambda: check_server(url, sslmode=section.sslmode, ca_file=section.ca_file),
        )
    ]


def _probe_backups(folder: Path) -> Callable[[], str]:
    def probe() -> str:
        from timothy.store.backups import list_backups

        found = list_backups(folder)
        where = folder / "backups"
        if not found:
            return (
                f"none yet in {where} (the app makes one each day; `timothy backup` makes one now)"
            )
        latest = found[0]
        holds = "unreadable" if latest.memories is None else f"{latest.memories} memories"
        return (
            f"{len(found)} in {where}; the latest {latest.made_at:%Y-%m-%d %H:%M} UTC "
            f"({latest.reason.value}, {holds}): `timothy restore {latest.path}`"
        )

    return probe


def _probe_keyring() -> str:
    import keyring

    from timothy import secrets

    if not secrets.keyring_available():
        raise RuntimeError("no keyring backend: API keys cannot be stored safely")
    # A real look-up (of a name never stored), so a backend that is present but cannot answer
    # (no Secret Service on the bus, a refused D-Bus call) fails here rather than at the first key.
    keyring.get_password(secrets.SERVICE, "self-check")
    backend = keyring.get_keyring()
    return f"{type(backend).__module__}.{type(backend).__name__} answers"


class _Body:
    """A canned HTTP body, shaped like the urllib3 response botocore reads."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, **kwargs: Any) -> Iterator[bytes]:
        yield self.data


def _probe_bedrock() -> str:
    """A bedrock-runtime client builds, signs and parses a Converse call, all offline.

    It proves the build carries what botocore loads for a client (the service model, endpoint
    rules, partitions, retry and SDK defaults): the packaged app keeps only some of botocore's
    data. The request is answered in-process, before it would be sent; the owner's AWS profile
    and credentials are not read.
    """
    import boto3.session
    import botocore.session
    from botocore.awsrequest import AWSResponse

    isolated = botocore.session.Session(
        session_vars={
            "profile": (None, None, None, None),
            "config_file": (None, None, os.devnull, None),
            "credentials_file": (None, None, os.devnull, None),
        }
    )
    client = boto3.session.Session(botocore_session=isolated).client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDSELFCHECK",
        aws_secret_access_key="self-check",
    )
    sent: dict[str, str] = {}

    def answer(request: Any, **kwargs: Any) -> Any:
        sent["url"] = request.url
        sent["auth"] = request.headers.get("Authorization", b"").decode()
        reply = {
            "output": {"message": {"role": "assistant", "content": [{"text": "ok"}]}},
            "stopReason": "end_turn",
            "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
            "metrics": {"latencyMs": 1},
        }
        headers = {"content-type": "application/json"}
        return AWSResponse(request.url, 200, headers, _Body(json.dumps(reply).encode()))

    client.meta.events.register("before-send.bedrock-runtime.Converse", answer)
    with no_network():
        result = client.converse(
            modelId="amazon.nova-lite-v1:0",
            messages=[{"role": "user", "content": [{"text": "ping"}]}],
        )
    if not sent.get("auth", "").startswith("AWS4-HMAC-SHA256"):
        raise RuntimeError("the Converse request was not signed")
    if result["output"]["message"]["content"][0]["text"] != "ok":
        raise RuntimeError(f"the Converse reply was misread: {result['output']}")
    return "bedrock-runtime Converse request built, signed and answered offline"


def _probe_openai() -> str:
    """The openai client builds a chat request and reads the reply, answered in-process."""
    import importlib

    from timothy.providers.sdk import importing

    with importing():  # as the app imports it: the SDK's types made lazy (providers/sdk.py)
        import openai

    # openai 3 talks through httpx2, older releases through httpx; both have MockTransport.
    try:
        http: Any = importlib.import_module("httpx2")
    except ImportError:
        http = importlib.import_module("httpx")
    sent: dict[str, str] = {}

    def answer(request: Any) -> Any:
        sent["url"] = str(request.url)
        reply = {
            "id": "chatcmpl-self-check",
            "object": "chat.completion",
            "created": 0,
            "model": "self-check",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "ok"},
                    "finish_reason": "stop",
                }
            ],
        }
        return http.Response(200, json=reply)

    client = openai.OpenAI(
        api_key="sk-self-check",
        base_url="http://openai.invalid/v1",
        http_client=http.Client(transport=http.MockTransport(answer)),
        max_retries=0,
    )
    with no_network():
        result = client.chat.completions.create(
            model="self-check", messages=[{"role": "user", "content": "ping"}]
        )
    if not sent.get("url", "").endswith("/chat/completions"):
        raise RuntimeError(f"the request went to {sent.get('url')}")
    if result.choices[0].message.content != "ok":
        raise RuntimeError("the chat completion was misread")
    return f"openai {openai.__version__} chat request built and answered offline"


def _probe_local_embedder() -> str:
    """The offline MiniLM embedder verifies its files, runs, and tells related sentences apart.

    It goes through the provider itself (timothy.providers.local), so it proves the build
    carries onnxruntime, tokenizers, the model file and the tokenizer, with their pinned hashes.
    """
    from timothy.providers.local import DIMENSION, MODEL_ID, LocalEmbedder

    embedder = LocalEmbedder()
    with no_network():
        vectors = embedder.embed(
            [
                "I prefer aisle seats on long flights",
                "On planes I like to sit by the aisle",
                "The quarterly tax return is due in April",
            ]
        )
    if len(vectors[0]) != DIMENSION:
        raise RuntimeError(f"a vector has {len(vectors[0])} numbers, not {DIMENSION}")
    related = sum(a * b for a, b in zip(vectors[0], vectors[1], strict=True))
    unrelated = sum(a * b for a, b in zip(vectors[0], vectors[2], strict=True))
    if not related > unrelated:
        raise RuntimeError(f"related sentences scored {related:.2f}, unrelated {unrelated:.2f}")
    return (
        f"{MODEL_ID} ({DIMENSION} dimensions, files verified) ran offline, "
        f"related {related:.2f} > unrelated {unrelated:.2f}"
    )


def backup_check(data: Path | None = None) -> Check:
    """Where the backups are and the latest one, with the command that restores it."""
    return _run("backups", _probe_backups(data if data is not None else paths.data_dir()))


# Libraries Qt's X11 (xcb) platform plugin loads that Qt's own wheels do not ship, with the
# Debian/Ubuntu package that has each. Without one, Qt dies with its generic "could not load
# the Qt platform plugin" message, naming neither.
XCB_LIBRARIES: tuple[tuple[str, str], ...] = (("libxcb-cursor.so.0", "libxcb-cursor0"),)


def xcb_wanted(environ: Mapping[str, str] | None = None) -> bool:
    """Qt will try its X11 (xcb) platform plugin first: on Linux, asked for by
    QT_QPA_PLATFORM, or the default under X11 (a display and no Wayland)."""
    env = os.environ if environ is None else environ
    if not sys.platform.startswith("linux"):
        return False
    chosen = env.get("QT_QPA_PLATFORM", "")
    if chosen:
        return chosen.split(";")[0].split(":")[0].strip() == "xcb"
    return bool(env.get("DISPLAY")) and not env.get("WAYLAND_DISPLAY")


def missing_xcb_libraries(
    libraries: tuple[tuple[str, str], ...] = XCB_LIBRARIES,
) -> list[tuple[str, str]]:
    """The (library, package) pairs the dynamic loader cannot load, tried as Qt would."""
    missing = []
    for library, package in libraries:
        try:
            ctypes.CDLL(library)
        except OSError:
            missing.append((library, package))
    return missing


def xcb_library_problem(
    libraries: tuple[tuple[str, str], ...] = XCB_LIBRARIES,
) -> str | None:
    """What is missing for Qt's X11 windows and how to install it, or None."""
    missing = missing_xcb_libraries(libraries)
    if not missing:
        return None
    names = ", ".join(library for library, _package in missing)
    packages = " ".join(package for _library, package in missing)
    return (
        f"Qt's X11 (xcb) platform plugin needs {names}, which is not installed. Install it "
        f"with `sudo apt-get install {packages}` (Debian, Ubuntu; on Fedora "
        "`sudo dnf install xcb-util-cursor`, on Arch `sudo pacman -S xcb-util-cursor`)."
    )


def _probe_qt_libraries() -> str:
    problem = xcb_library_problem()
    names = ", ".join(library for library, _package in XCB_LIBRARIES)
    if problem is None:
        return f"{names} loaded (X11 windows can open)"
    if xcb_wanted():
        raise RuntimeError(problem)
    return f"not needed here (no X11 display), but for X11 windows: {problem}"


def provider_checks(settings: Settings | None = None) -> list[Check]:
    """The configured chat and embedding providers, each asked one small real request.
    Needs no network when nothing is configured ("not configured" passes)."""
    from timothy.providers.checks import check_providers
    from timothy.settings import load_settings

    return [
        Check(f"{result.role} provider", result.ok, result.detail())
        for result in check_providers(settings if settings is not None else load_settings())
    ]


def self_checks(data: Path | None = None) -> list[Check]:
    """Storage, search, tokens, folders, keyring, and the providers' offline parts."""
    folder = data if data is not None else paths.data_dir()
    return [
        _run("sqlite-vec", _probe_sqlite_vec),
        _run("FTS5", _probe_fts5),
        _run("token encoding", _probe_encoding),
        _run("data folder", _probe_data_dir(folder)),
        _run("database", _probe_database(folder)),
        *_server_checks(),
        _run("keyring", _probe_keyring),
        _run("OpenAI client", _probe_openai),
        _run("Bedrock client", _probe_bedrock),
        _run("local embedder", _probe_local_embedder),
        *([_run("Qt libraries", _probe_qt_libraries)] if sys.platform.startswith("linux") else []),
    ]
