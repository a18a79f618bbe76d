"""Shared fixtures: every test gets its own data, config, cache, log folders and keyring."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest

from tests.fakes.keyring_backend import FileKeyring
from timothy.store import Store

REPO = Path(__file__).resolve().parent.parent

# The fake provider servers (`openai_server`, `bedrock_server`) for every test.
pytest_plugins = ["tests.fakes.fixtures"]


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


@pytest.fixture
def store(data_dir: Path) -> Iterator[Store]:
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
