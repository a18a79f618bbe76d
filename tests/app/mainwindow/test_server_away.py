"""The window on a server store whose server is out of reach: it opens at once with the
conversations this machine has, says plainly that the server is away and retrying (not an
error), chats on without memories, and mends itself when the server answers again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.mainwindow import main_window
from app.mainwindow.main_window import MainWindow
from app.mainwindow.memory_upkeep import TIDY_UP_WAITS_TEXT
from app.mainwindow.server_watch import AWAY_TEXT, BACK_TEXT, refused_text
from app.transcript.notice import Notice
from app.transcript.transcript_view import SERVER_AWAY_TEXT
from tests.app.conftest import WindowFactory, settle, settle_engine
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.postgres import PgServer, refuse_memories_saying
from timothy.store.postgres import PostgresStore

NO_FACTS = json.dumps({"facts": []})
RECOVERY_MS = 60_000


@pytest.fixture
def server_up(pg_server: PgServer) -> Iterator[PgServer]:
    """The test server, running again after the test whatever happened in it."""
    yield pg_server
    pg_server.start()


@pytest.fixture
def refusing() -> bool:
    """Whether the server refuses memories saying "refuse me" (a test parametrizes it)."""
    return False


@pytest.fixture
def store(
    pg_url: str, server_up: PgServer, isolated_env: Path, refusing: bool
) -> Iterator[PostgresStore]:
    """A store on the server that has one conversation, opened while the server is away."""
    with PostgresStore(pg_url) as earlier:
        talk = earlier.sessions.create(title="Before the outage")
        earlier.sessions.add_message(talk.id, "user", "Remember the milk")
    if refusing:
        refuse_memories_saying(pg_url, "refuse me")
    server_up.kill()
    with PostgresStore(pg_url, connect_timeout=2, start_offline=True) as opened:
        yield opened


def away_notices(window: MainWindow) -> list[Notice]:
    return [n for n in window.chat.transcript.findChildren(Notice) if n.property("away") is True]


def test_the_window_opens_without_the_server_and_mends_itself_when_it_answers(
    qtbot: QtBot, make_window: WindowFactory, store: PostgresStore, server_up: PgServer
) -> None:
    window = make_window()
    assert not store.reachable
    # Not an error: a warning that says what happens meanwhile (once the start's grace for
    # a slow server has passed).
    qtbot.waitUntil(window.banner.isVisible, timeout=RECOVERY_MS)
    assert window.banner.kind == "warning"
    assert "out of reach — retrying" in window.banner.text_label.text()
    qtbot.waitUntil(
        lambda: [c.title for c in window.sidebar.model.conversations()] == ["Before the outage"],
        timeout=5000,
    )
    # The memory pane's failures to read do not push the state away with an error; the
    # pane says why its lists are empty.
    settle(qtbot, window.workers)
    assert window.banner.kind == "warning"
    assert window.memory_pane.away_label.isVisible()
    server_up.start()
    qtbot.waitUntil(lambda: window.banner.text_label.text() == BACK_TEXT, timeout=RECOVERY_MS)
    assert store.reachable and window.banner.kind == "info"
    assert not window.memory_pane.away_label.isVisible()


def test_a_turn_while_the_server_is_away_is_kept_and_handed_over(
    qtbot: QtBot,
    make_window: WindowFactory,
    store: PostgresStore,
    server_up: PgServer,
    openai_server: OpenAIServer,
    pg_url: str,
    tmp_path: Path,
) -> None:
    window = make_window(server=openai_server)
    openai_server.reply("Got it, milk and eggs.")
    openai_server.reply("Shopping list")  # the title
    openai_server.reply(NO_FACTS)  # extraction
    window.chat.composer.input.setFocus()
    window.chat.composer.set_text("Add eggs to the list")
    qtbot.keyClick(window.chat.composer.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not window.chat.streaming, timeout=10_000)
    settle_engine(qtbot, window)
    user, reply = window.chat.transcript.messages
    assert reply.content == "Got it, milk and eggs."
    [notice] = away_notices(window)
    assert notice.text_label.text() == SERVER_AWAY_TEXT
    qtbot.waitUntil(window.banner.isVisible, timeout=RECOVERY_MS)
    assert window.banner.kind == "warning"  # the turn's failures did not replace it
    session_id = window.chat.conversation_id
    assert session_id is not None

    server_up.start()
    qtbot.waitUntil(lambda: window.banner.text_label.text() == BACK_TEXT, timeout=RECOVERY_MS)
    with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "other") as desktop:
        said = [m.content for m in desktop.sessions.branch(session_id)]
    assert said == ["Add eggs to the list", "Got it, milk and eggs."]
    assert user.message_id is not None


def test_a_server_that_answers_within_the_start_grace_shows_no_banner(
    qtbot: QtBot,
    make_window: WindowFactory,
    store: PostgresStore,
    server_up: PgServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A slow server (the store opened without it: it did not answer in half a second)
    that answers soon after: neither "out of reach" nor "answers again" at every start."""
    monkeypatch.setattr(main_window, "AWAY_GRACE_MS", RECOVERY_MS * 2)
    window = make_window()
    assert not store.reachable
    settle(qtbot, window.workers)  # the views' reads failed meanwhile, quietly
    assert not window.banner.isVisible()
    server_up.start()
    qtbot.waitUntil(lambda: store.reachable, timeout=RECOVERY_MS)
    qtbot.waitUntil(lambda: not window._away_grace.isActive(), timeout=5000)  # heard it
    settle(qtbot, window.workers)
    assert not window.banner.isVisible()
    assert not window.memory_pane.away_label.isVisible()
    qtbot.waitUntil(
        lambda: [c.title for c in window.sidebar.model.conversations()] == ["Before the outage"],
        timeout=5000,
    )


@pytest.mark.parametrize("refusing", [True])
def test_what_the_server_refuses_at_the_hand_over_is_said_not_called_handed_over(
    qtbot: QtBot,
    make_window: WindowFactory,
    store: PostgresStore,
    server_up: PgServer,
    refusing: bool,
) -> None:
    window = make_window()
    qtbot.waitUntil(window.banner.isVisible, timeout=RECOVERY_MS)  # away
    kept = store.memories.add("Please refuse me, server", source="remember")
    server_up.start()
    qtbot.waitUntil(lambda: window.banner.text_label.text() == refused_text(1), timeout=RECOVERY_MS)
    assert window.banner.kind == "warning"
    assert store.reachable and [m.id for m in store.outbox.pending()] == [kept.id]
    assert "refused 1 change kept on this machine" in refused_text(1)


def test_the_daily_tidy_up_waits_for_the_server_and_runs_when_it_answers(
    qtbot: QtBot, make_window: WindowFactory, store: PostgresStore, server_up: PgServer
) -> None:
    """The status bar said "Consolidation failed" while the banner said the server was
    away and retrying; the tidy-up then waited an hour for its next check."""
    window = make_window(consolidation_delay_ms=0)
    status = window.status
    qtbot.waitUntil(lambda: status.consolidation_text == TIDY_UP_WAITS_TEXT, timeout=RECOVERY_MS)
    server_up.start()
    # It runs as soon as the server answers: its question may take the banner's place
    # before "answers again" is seen, so only the away notice's going is asked for.
    qtbot.waitUntil(
        lambda: status.consolidation_text == "Tidy-up: waiting for your OK", timeout=RECOVERY_MS
    )
    assert window.banner.text_label.text() != AWAY_TEXT
