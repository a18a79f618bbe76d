"""A keyring locked when the window started: once the owner unlocks it, the chat model is
built without a restart (*Try again*, or the window coming to the front), in few reads."""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.chat.welcome_panel import KEYRING_LOCKED_TEXT, SET_UP_TEXT
from app.mainwindow.main_window import KEYRING_BACK_TEXT, MainWindow
from tests.app.conftest import WindowFactory, settle
from tests.fakes.bedrock_server import BedrockServer
from tests.fakes.keyring_backend import LockableKeyring
from timothy.providers.openai_chat import OpenAIChat
from timothy.providers.openai_embeddings import OpenAIEmbeddings
from timothy.secrets import OPENAI_API_KEY, set_secret
from timothy.settings import BedrockSettings, Settings

KEY = "sk-test-kept-in-the-locked-keyring"
# OpenAI's own API (no base_url): its key is read when the chat model is built. No request
# is made: a test has no network; the build and what the window says are what is checked.
OPENAI = Settings(chat_provider="openai", embedding_provider=None)


@pytest.fixture
def locked(isolated_env: object, monkeypatch: pytest.MonkeyPatch) -> Iterator[LockableKeyring]:
    """The owner's key is saved, and the keyring is locked when the window starts."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    set_secret(OPENAI_API_KEY, KEY)  # into the test's file keyring, before the lock
    previous = keyring.get_keyring()
    backend = LockableKeyring(locked=True)
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


def rebuilt_with_the_key(window: MainWindow) -> bool:
    setup = window.assistant.setup if window.assistant is not None else None
    chat = setup.chat if setup is not None else None
    return isinstance(chat, OpenAIChat) and chat._client.key == KEY


def activate(window: MainWindow) -> None:
    """The window comes to the front (as after unlocking the keyring in another window)."""
    window.activateWindow()
    QApplication.sendEvent(window, QEvent(QEvent.Type.ActivationChange))


def test_try_again_builds_the_chat_model_once_the_keyring_is_unlocked(
    qtbot: QtBot, make_window: WindowFactory, locked: LockableKeyring
) -> None:
    window = make_window(settings=OPENAI)
    assert window.assistant is not None and window.assistant.setup is not None
    assert window.assistant.setup.keyring_locked
    assert not window.chat.chat_ready
    banner = window.banner
    assert banner.isVisible() and "locked" in banner.text_label.text()
    assert banner.action_button.text() == "Try again"  # not Settings: nothing to change there

    # Still locked: one read, and the window says so with the same offer.
    reads = locked.reads
    banner.action_button.click()
    qtbot.waitUntil(lambda: banner.isVisible(), timeout=5000)
    assert banner.text_label.text().startswith("The API key still cannot be read:")
    assert banner.action_button.text() == "Try again"
    assert locked.reads == reads + 1
    assert not window.chat.chat_ready

    locked.locked = False  # the owner unlocks it
    banner.action_button.click()
    qtbot.waitUntil(lambda: rebuilt_with_the_key(window), timeout=10_000)
    settle(qtbot, window.workers, window.network)
    assert window.chat.chat_ready
    assert window.chat.composer.isEnabled() or window.chat.composer.isVisible()
    assert banner.isVisible() and banner.text_label.text() == KEYRING_BACK_TEXT
    assert "not set up" not in window.status.chat_label.text()


def test_the_welcome_says_the_key_is_locked_away_and_tries_again(
    qtbot: QtBot, make_window: WindowFactory, locked: LockableKeyring
) -> None:
    window = make_window(settings=OPENAI)
    chat = window.chat
    welcome = chat.welcome
    assert chat.stack.currentWidget() is welcome and welcome.isVisible()
    # Not "connect a model": one is set up; the keyring keeps its key.
    assert welcome.explain.text() == KEYRING_LOCKED_TEXT
    assert "connect a model" not in welcome.explain.text()
    assert welcome.settings_button.text().strip() == "Try again"
    assert not welcome.probe_label.isVisible() and not welcome.local_box.isVisible()
    assert "locked" in chat.composer.input.placeholderText()

    # Still locked: the welcome's button reads the keyring once and the banner says so.
    reads = locked.reads
    with qtbot.assertNotEmitted(chat.settings_requested):
        welcome.settings_button.click()
        qtbot.waitUntil(
            lambda: window.banner.text_label.text().startswith("The API key still cannot be read:"),
            timeout=5000,
        )
    assert locked.reads == reads + 1
    assert welcome.explain.text() == KEYRING_LOCKED_TEXT

    locked.locked = False  # the owner unlocks it
    welcome.settings_button.click()
    qtbot.waitUntil(lambda: rebuilt_with_the_key(window), timeout=10_000)
    settle(qtbot, window.workers, window.network)
    assert chat.chat_ready and chat.stack.currentWidget() is chat.blank
    assert chat.composer.input.placeholderText() == "Message Timothy"
    assert welcome.explain.text() == SET_UP_TEXT  # shown again only when nothing is set up


def test_a_locked_keyring_is_read_once_at_start(
    qtbot: QtBot, make_window: WindowFactory, locked: LockableKeyring
) -> None:
    # Each read of a locked keyring may put up the system's unlock prompt: the model list
    # does not read it again after the chat model's build could not.
    window = make_window(settings=OPENAI)
    qtbot.waitUntil(lambda: window.start_loads.done, timeout=10_000)
    settle(qtbot, window.workers, window.network)
    assert locked.reads == 1
    assert window.chat.model_picker.models() == [OPENAI.openai.chat_model]


def test_coming_back_to_the_window_tries_again_but_not_at_every_focus(
    qtbot: QtBot, make_window: WindowFactory, locked: LockableKeyring
) -> None:
    window = make_window(settings=OPENAI)
    assistant = window.assistant
    assert assistant is not None and assistant.setup is not None
    assert assistant.setup.keyring_locked
    # Focusing the window again and again just after the start (or after a refused unlock
    # prompt, which hands the focus back) reads nothing: a read may prompt again.
    reads = locked.reads
    for _ in range(5):
        activate(window)
        settle(qtbot, window.workers, window.network)
    assert locked.reads == reads
    assert not window.chat.chat_ready

    # Later (the bound made short here), with the keyring unlocked meanwhile: one read,
    # one build, and the chat model is there.
    assistant.keyring_retry_seconds = 0.0
    locked.locked = False
    activate(window)
    qtbot.waitUntil(lambda: rebuilt_with_the_key(window), timeout=10_000)
    settle(qtbot, window.workers, window.network)
    assert window.chat.chat_ready
    assert window.banner.text_label.text() == KEYRING_BACK_TEXT
    # Built: focusing the window no longer reads the keyring at all.
    reads = locked.reads
    activate(window)
    settle(qtbot, window.workers, window.network)
    assert locked.reads == reads


def test_a_key_that_is_not_the_keyrings_fault_offers_settings(
    qtbot: QtBot, make_window: WindowFactory, isolated_env: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # no key saved at all
    window = make_window(settings=OPENAI)
    assert window.assistant is not None and window.assistant.setup is not None
    assert not window.assistant.setup.keyring_locked
    assert window.banner.action_button.text() == "Settings"
    assert "No OpenAI API key is set" in window.banner.text_label.text()
    assert window.chat.welcome.explain.text() == SET_UP_TEXT  # this one is to set up
    assert window.chat.welcome.settings_button.text().strip() == "Set up a chat model"


def test_sending_a_message_tries_the_keyring_again(
    qtbot: QtBot,
    make_window: WindowFactory,
    locked: LockableKeyring,
    bedrock_server: BedrockServer,
) -> None:
    # Chat through Bedrock (no key), vector search through OpenAI's own API (its key locked).
    settings = Settings(
        chat_provider="bedrock", bedrock=bedrock_server.settings(), embedding_provider="openai"
    )
    window = make_window(settings=settings)
    assistant = window.assistant
    assert assistant is not None and assistant.setup is not None
    assert assistant.setup.keyring_locked and window.chat.chat_ready
    assert window.banner.text_label.text().startswith("Vector search is off:")
    assert window.banner.action_button.text() == "Try again"

    assistant.keyring_retry_seconds = 0.0  # as if the owner came back later
    locked.locked = False
    bedrock_server.reply("Hello again.")
    window.chat.composer.set_text("Hello")
    qtbot.keyClick(window.chat.composer.input, Qt.Key.Key_Return)
    qtbot.waitUntil(
        lambda: assistant.setup is not None and not assistant.setup.keyring_locked,
        timeout=10_000,
    )
    qtbot.waitUntil(lambda: not window.chat.streaming, timeout=10_000)
    settle(qtbot, window.workers, window.network)
    embedder = assistant.setup.embedder
    assert isinstance(embedder, OpenAIEmbeddings) and embedder._client.key == KEY
    assert window.chat.transcript.messages[-1].content == "Hello again."


def test_the_offer_follows_the_problem_shown_not_another_ones_locked_key(
    qtbot: QtBot, make_window: WindowFactory, locked: LockableKeyring
) -> None:
    # The chat model has a wrong setting; only the embeddings' key is in the locked keyring.
    settings = Settings(
        chat_provider="bedrock",
        bedrock=BedrockSettings(region="us-east-1", profile="no-such-profile"),
        embedding_provider="openai",
    )
    window = make_window(settings=settings)
    assistant = window.assistant
    assert assistant is not None and assistant.setup is not None
    assert assistant.setup.locked_out == {"embeddings"}
    assert "no-such-profile" in window.banner.text_label.text()
    assert window.banner.action_button.text() == "Settings"
