"""Shared fixtures: every test gets its own data, config, cache, log folders and keyring."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from hypothesis import settings

from tests.fakes.keyring_backend import FileKeyring
from tests.fakes.pg_proxy import LossyProxy
from tests.fakes.postgres import PgServer
from tests.fakes.screens import DESKTOP, offscreen_platform
from timothy.store import Store
from timothy.store.engine import StoreEngine
from timothy.store.location import STORE_URL_ENV
from timothy.store.postgres import PostgresStore

REPO = Path(__file__).resolve().parent.parent

# Property tests judge what recall and the store answer, not how fast: on a loaded machine
# (CI shares its cores) one slow example must not fail a run on Hypothesis's 200 ms deadline.
settings.register_profile("timothy", deadline=None)
settings.load_profile("timothy")

# The fake provider servers (`openai_server`, `bedrock_server`) for every test.
pytest_plugins = ["tests.fakes.fixtures"]


@pytest.fixture(scope="session")
def qapp_args(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """pytest-qt's application, offscreen on a desktop-sized screen (tests/fakes/screens.py):
    the window opens at its full size, as on the owner's desktop."""
    args = [pytestconfig.getini("qt_qapp_name")]
    if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        args += ["-platform", offscreen_platform(tmp_path_factory.mktemp("screen"), DESKTOP)]
    return args


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point every folder Timothy uses into the test's tmp_path; never touch the real ones."""
    home = tmp_path / "env"
    for name, sub in (
        ("TIMOTHY_DATA_DIR", "data"),
        ("TIMOTHY_CONFIG_DIR", "config"),
        ("TIMOTHY_CACHE_DIR", "cache"),
        ("TIMOTHY_LOG_DIR", "logs"),
    ):
        monkeypatch.setenv(name, str(home / sub))
    monkeypatch.setenv("TIMOTHY_TEST_KEYRING_FILE", str(home / "keyring.json"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "tests.fakes.keyring_backend.FileKeyring")
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    # Never the machine's AWS profiles, nor AWS itself: Bedrock's control plane (the model
    # lists) answers from a closed local port unless a test starts the fake one.
    monkeypatch.setenv("AWS_CONFIG_FILE", str(home / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(home / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK", "http://127.0.0.1:9")
    pythonpath = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(REPO) + (os.pathsep + pythonpath if pythonpath else ""))
    previous = keyring.get_keyring()
    keyring.set_keyring(FileKeyring())
    yield home
    keyring.set_keyring(previous)


@pytest.fixture
def data_dir(isolated_env: Path) -> Path:
    return isolated_env / "data"


# Test modules whose `store` runs on both engines: the SQLite file and a PostgreSQL server.
# A test in them that is about the SQLite file itself is marked `sqlite_only`.
BOTH_ENGINES = (
    "tests/store/test_memories_lifecycle.py",
    "tests/store/test_memories_consolidation.py",
    "tests/store/test_search_text.py",
    "tests/store/test_search_entity.py",
    "tests/store/test_search_dates.py",
    "tests/store/test_sessions.py",
    "tests/store/test_branches.py",
    "tests/store/test_vectors.py",
    "tests/store/test_forget.py",
    "tests/retrieval/",
    "tests/memory/test_consolidation.py",
    "tests/memory/test_consolidation_merge.py",
    "tests/memory/test_embedding.py",
    "tests/chat/test_turn.py",
    "tests/chat/test_extraction.py",
    "tests/chat/test_compaction.py",
    "tests/chat/test_rejected_facts.py",
    "tests/chat/test_degradation.py",
    "tests/chat/test_local_dates.py",
    "tests/chat/test_remember_gate.py",
    "tests/chat/test_branches.py",
    "tests/chat/test_export.py",
)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store_kind" not in metafunc.fixturenames:
        return
    where = Path(str(metafunc.definition.path)).relative_to(REPO).as_posix()
    both = any(where.startswith(prefix) for prefix in BOTH_ENGINES)
    if both and metafunc.definition.get_closest_marker("sqlite_only") is None:
        metafunc.parametrize("store_kind", ["sqlite", "postgres"], indirect=True)


@pytest.fixture
def store_kind(request: pytest.FixtureRequest) -> str:
    """Which engine the test's `store` is: "sqlite" unless the module runs on both."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """One real PostgreSQL + pgvector server for the whole run (see tests/fakes/postgres.py)."""
    with PgServer.temporary() as server:
        yield server


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """The address of an empty database (a schema of its own) on the test server."""
    return pg_server.fresh_url()


@pytest.fixture
def lossy_proxy(pg_url: str) -> Iterator[LossyProxy]:
    """A proxy in front of `pg_url` that can lose a reply (see tests/fakes/pg_proxy.py): a
    store opened on `lossy_proxy.url(pg_url)` reaches the server only through it."""
    with LossyProxy.running(pg_url) as running:
        yield running


@pytest.fixture
def store(
    store_kind: str, data_dir: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[StoreEngine]:
    """The test's store; on the server, the `timothy` command it runs uses the same one."""
    if store_kind == "postgres":
        url = request.getfixturevalue("pg_url")
        monkeypatch.setenv(STORE_URL_ENV, url)
        with PostgresStore(url) as server_store:
            yield server_store
        return
    with Store.open(data_dir) as opened:
        yield opened


def run_timothy(
    *args: str, input: str | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the `timothy` command line in a subprocess (the installed entry point's code)."""
    return subprocess.run(
        [sys.executable, "-m", "app", *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        cwd=REPO,
    )
