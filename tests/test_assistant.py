"""The core is assembled in one place: the app and `timothy chat` build their chat engine
through `timothy.assistant.build`, and each part of the engine gets its own settings section."""

from __future__ import annotations

import ast
from pathlib import Path

from timothy.assistant import build, warm_embedder
from timothy.chat.settings import ChatSettings
from timothy.memory.settings import MemoryPolicySettings
from timothy.providers.local import LocalEmbedder
from timothy.providers.openai_chat import OpenAIChat
from timothy.providers.settings import OpenAISettings
from timothy.retrieval.floor import background_for
from timothy.retrieval.settings import RecallSettings
from timothy.settings import Settings
from timothy.store import Store

ROOT = Path(__file__).resolve().parents[1]


def _calls(path: Path, name: str) -> list[int]:
    """Lines where `path` calls something named `name` (plain or as an attribute)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if called == name:
                found.append(node.lineno)
    return found


def _imports(path: Path, module: str, name: str) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(
        isinstance(node, ast.ImportFrom)
        and node.module == module
        and any(alias.name == name for alias in node.names)
        for node in ast.walk(tree)
    )


def test_only_the_assembly_constructs_a_chat_engine() -> None:
    sources = [*ROOT.joinpath("timothy").rglob("*.py"), *ROOT.joinpath("app").rglob("*.py")]
    constructing = sorted(
        str(path.relative_to(ROOT)) for path in sources if _calls(path, "ChatEngine")
    )
    assert constructing == ["timothy/assistant.py"]


def test_the_app_and_the_cli_build_through_the_same_function() -> None:
    app = next(ROOT.joinpath("app").rglob("assistant.py"))
    cli = ROOT / "timothy" / "cli" / "chat.py"
    for path in (app, cli):
        assert _imports(path, "timothy.assistant", "build"), path
        assert _calls(path, "build"), path


def test_build_hands_each_part_its_own_section(store: Store) -> None:
    settings = Settings(
        chat_provider="openai",
        openai=OpenAISettings(base_url="http://127.0.0.1:9/v1", use_memories=False),
        recall=RecallSettings(token_budget=321),
        chat=ChatSettings(max_tool_rounds=2),
        memory=MemoryPolicySettings(ask_before_saving=True),
    )
    engine, setup = build(store, settings, warm=False)
    try:
        assert setup.chat_problem is None and setup.chat is engine.chat
        assert engine.recall_settings.token_budget == 321
        assert engine.recaller.settings is engine.recall_settings
        assert engine.chat_settings.max_tool_rounds == 2
        assert engine.policy.ask_before_saving
        assert not engine.memories_allowed()  # the owner's switch for this provider
    finally:
        engine.close()


class _FreshLocalModel(LocalEmbedder):
    """The local model under a name of its own: the floor's background sentences are kept
    per model for the process, so this one's are not embedded yet."""

    @property
    def model_id(self) -> str:
        return "test/warmed-local-model"


def test_warming_the_local_model_embeds_the_floors_background_before_it_returns() -> None:
    """At start-up the next load waits for it: the model's runs take every core, and a load
    of Python beside them would keep the GIL from the window while preempted."""
    embedder = _FreshLocalModel()
    warm_embedder(embedder)
    assert embedder.loaded
    assert background_for(embedder, wait=False) is not None


def test_a_warm_build_makes_the_servers_client_before_the_first_turn(store: Store) -> None:
    """The SDK's client (key, HTTP client, TLS context: tens of milliseconds holding the
    GIL) is made by the build's worker, so the first turn's request does not stall the
    window making it; a cold build leaves it to the first request."""
    settings = Settings(
        chat_provider="openai",
        openai=OpenAISettings(base_url="http://127.0.0.1:9/v1"),
    )
    for warm in (False, True):
        engine, setup = build(store, settings, warm=warm, load_embedder=False)
        try:
            chat = setup.chat
            assert isinstance(chat, OpenAIChat)
            assert (chat._client._client is not None) is warm
        finally:
            engine.close()
