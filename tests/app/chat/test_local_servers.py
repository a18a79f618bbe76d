"""Finding a model server already running on this computer: the probe asks its model list."""

from __future__ import annotations

import socket

from app.chat.local_servers import LocalServer, find_local_servers, probe
from tests.fakes.openai_server import OpenAIServer


def closed_port() -> int:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return int(free.getsockname()[1])


def test_a_running_server_is_found_with_its_models(openai_server: OpenAIServer) -> None:
    openai_server.models = ["llama3.2", "qwen2.5"]
    found = probe("Ollama", openai_server.port)
    assert found == LocalServer("Ollama", f"{openai_server.url}/v1", ("llama3.2", "qwen2.5"))


def test_only_the_ports_that_answer_are_offered(openai_server: OpenAIServer) -> None:
    openai_server.models = []
    found = find_local_servers((("Ollama", closed_port()), ("LM Studio", openai_server.port)))
    assert found == [LocalServer("LM Studio", f"{openai_server.url}/v1", ())]


def test_a_server_without_a_model_list_is_not_one(openai_server: OpenAIServer) -> None:
    openai_server.models = None  # /v1/models is 404
    assert probe("Ollama", openai_server.port) is None
