"""A turn while the memory server turns this computer's login away (a wrong password): the
reply streams without memories, and the turn says the server refused the login, with its
reason, not that the server is out of reach (it answers; retrying alone will not mend it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from psycopg.conninfo import make_conninfo

from tests.chat.conftest import MakeEngine, run
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.postgres import PgServer, password_role
from timothy.chat.engine import SERVER_REFUSED_NOTE
from timothy.chat.events import RecallFinished, TurnFinished
from timothy.store.postgres import PostgresStore

WHY = 'password authentication failed for user "owner_with_password"'


@pytest.fixture
def store(pg_server: PgServer, tmp_path: Path) -> Iterator[PostgresStore]:
    """The app's store on a server that refuses this computer's password."""
    address = password_role(pg_server, "owner_with_password", "right")
    wrong = make_conninfo(address, password="wrong")
    with PostgresStore(wrong, outbox_dir=tmp_path, start_offline=True) as opened:
        assert opened.refused is not None
        yield opened


def test_a_turn_on_a_server_that_refused_the_login_says_so_with_its_reason(
    store: PostgresStore, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(openai_server)
    openai_server.reply("Hello!")
    events = run(engine.send("Hi"))
    engine.wait_idle(timeout=10)
    recall = next(e for e in events if isinstance(e, RecallFinished))
    assert recall.block == "" and recall.server_refused is not None
    assert WHY in recall.server_refused
    assert recall.note == SERVER_REFUSED_NOTE.format(why=recall.server_refused)
    assert "out of reach" not in recall.note
    assert next(e for e in events if isinstance(e, TurnFinished)).message.content == "Hello!"
