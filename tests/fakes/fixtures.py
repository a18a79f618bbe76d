"""Pytest fixtures for the fake provider servers, registered from `tests/conftest.py`.

    def test_reply(openai_server):
        openai_server.reply("Hi!")
        provider = chat_provider(Settings(chat_provider="openai", openai=openai_server.settings()))

`bedrock_server` also puts dummy AWS credentials in the environment (and hides any real AWS
config), so boto3 signs requests without touching the machine's own profiles.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.bedrock_control_server import BedrockControlServer
from tests.fakes.bedrock_server import BedrockServer
from tests.fakes.openai_server import OpenAIServer


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Dummy AWS credentials and no real AWS config, profiles or instance metadata."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDFAKEFORTESTS")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fake-secret-for-tests")
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_PROFILE", raising=False)
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def bedrock_server(aws_credentials: None) -> Iterator[BedrockServer]:
    with BedrockServer() as server:
        yield server


@pytest.fixture
def bedrock_control(aws_credentials: None) -> Iterator[BedrockControlServer]:
    """Bedrock's control plane (the model lists); boto3's "bedrock" clients find it through
    `AWS_ENDPOINT_URL_BEDROCK`, as they would a configured endpoint."""
    with BedrockControlServer() as server, pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_ENDPOINT_URL_BEDROCK", server.url)
        yield server
