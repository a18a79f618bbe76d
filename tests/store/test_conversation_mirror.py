"""The conversation mirror of a server store: a refresh (on the change feed's thread, while
the window goes on) forgets only what the mirror held before it asked the server."""

from __future__ import annotations

from pathlib import Path

from timothy.store.postgres.offline import ConversationMirror


def test_a_refresh_forgets_only_conversations_mirrored_before_it_asked_the_server(
    tmp_path: Path,
) -> None:
    mirror = ConversationMirror(tmp_path / "mirror.sqlite3")
    try:
        erased = mirror.repo.create(title="erased on another machine")
        known = set(mirror.updated_at())  # what the mirror held as the server was asked
        made = mirror.repo.create(title="made by this window meanwhile")
        mirror.repo.add_message(made.id, "user", "Which sushi places near Alfama?")
        # The server's answer, read before `made` existed, names neither.
        mirror.drop_sessions_except(set(), among=known)
        assert not mirror.has_session(erased.id)
        assert mirror.has_session(made.id)
        assert len(mirror.message_ids(made.id)) == 1
    finally:
        mirror.close()


def test_a_refresh_keeps_a_message_added_while_it_read_the_server(tmp_path: Path) -> None:
    mirror = ConversationMirror(tmp_path / "mirror.sqlite3")
    try:
        session = mirror.repo.create(title="Lisbon trip")
        first = mirror.repo.add_message(session.id, "user", "Flights on Friday?")
        before = mirror.message_ids(session.id)
        later = mirror.repo.add_message(session.id, "assistant", "Two, at 9 and at 14.")
        # The server's messages, read before the reply was added.
        mirror.replace_messages(session.id, [first], among=before)
        assert mirror.message_ids(session.id) == {first.id, later.id}
        # Without the bound (as before), the same answer takes the reply away.
        mirror.replace_messages(session.id, [first])
        assert mirror.message_ids(session.id) == {first.id}
    finally:
        mirror.close()
