"""Engines wired to the fake provider servers, with bounds short enough for tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import tzinfo
from typing import Any

import pytest

from tests.fakes.bedrock_server import BedrockServer
from tests.fakes.openai_server import OpenAIServer
from timothy.chat.engine import ChatEngine
from timothy.chat.events import TurnEvent
from timothy.chat.settings import ChatSettings
from timothy.providers.factory import chat_provider
from timothy.retrieval.settings import RecallSettings
from timothy.settings import MemoryPolicySettings, Settings
from timothy.store import Store

MakeEngine = Callable[..., ChatEngine]


@pytest.fixture
def make_engine(store: Store) -> Iterator[MakeEngine]:
    engines: list[ChatEngine] = []

    def make(
        server: OpenAIServer | BedrockServer,
        *,
        use_memories: bool = True,
        ask_before_saving: bool = False,
        recall_bound: float = 5.0,
        chat_settings: ChatSettings | None = None,
        embedder: Any = None,
        tz: tzinfo | None = None,
    ) -> ChatEngine:
        if isinstance(server, OpenAIServer):
            settings = Settings(
                chat_provider="openai", openai=server.settings(use_memories=use_memories)
            )
        else:
            settings = Settings(
                chat_provider="bedrock",
                bedrock=server.settings(
                    use_memories=use_memories, chat_model="us.amazon.nova-lite-v1:0"
                ),
            )
        engine = ChatEngine(
            store,
            chat=chat_provider(settings),
            embedder=embedder,
            recall_settings=RecallSettings(time_bound_seconds=recall_bound),
            chat_settings=chat_settings or ChatSettings(),
            policy=MemoryPolicySettings(ask_before_saving=ask_before_saving),
            use_memories=use_memories,
            tz=tz,
        )
        engines.append(engine)
        return engine

    yield make
    for engine in engines:
        engine.wait_idle(timeout=10)
        engine.close()


def run(events: Iterator[TurnEvent]) -> list[TurnEvent]:
    return list(events)
