"""The two engines side by side: choosing one, copying between them, and what only a server
shared by several machines meets (a newer schema, an edit made on another machine)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import psycopg
import pytest

from timothy import secrets
from timothy.cli import main
from timothy.errors import ChangedElsewhereError, InvalidInputError, StoreError
from timothy.settings import Settings, StoreSettings, load_settings, save_settings
from timothy.store import Store
from timothy.store.copy import copy_store
from timothy.store.engine import StoreEngine
from timothy.store.location import (
    STORE_URL_ENV,
    open_store,
    server_conninfo,
    store_password_key,
)
from timothy.store.postgres import PostgresStore
from timothy.store.postgres.migrations import SCHEMA_VERSION
from timothy.store.records import (
    LegVerdict,
    MemoryType,
    RecalledMemory,
    RecallRecord,
    StoredToolCall,
)
from timothy.store.transfer import export_lines

T0 = datetime(2025, 3, 1, 9, 30, 15, 123456, tzinfo=UTC)


def fill(store: StoreEngine) -> None:
    """A store with every kind of thing a copy must carry."""
    m = store.memories
    tea = m.add("I like green tea", entities=["Tea"], now=T0)
    m.supersede(tea.id, "I like green tea, no sugar", now=T0 + timedelta(days=1))
    staged = m.stage("My sister Zoë lives in Lyon", entities=["Zoë", "Lyon"], now=T0)
    rejected = m.stage("I hate Mondays", now=T0)
    m.reject(rejected.id)
    old = m.add("We went to Rome in 2019", type="episodic", now=T0 - timedelta(days=900))
    m.archive(old.id)
    a = m.add("Budget for Rome is 800 EUR", entities=["Rome"], confidence=0.7, now=T0)
    b = m.add("My Rome budget: 800 EUR", entities=["Rome", "Budget"], now=T0)
    m.merge([a.id, b.id], "My budget for Rome is 800 EUR", now=T0 + timedelta(days=2))
    m.mark_retrieved([staged.id], now=T0 + timedelta(hours=5))
    rng = np.random.default_rng(7)
    small = store.vectors.ensure_model("test/4d", 4)
    large = store.vectors.ensure_model("test/6d", 6)
    everyone = m.list(oldest_first=True)
    store.vectors.put_many(small, [(x.id, rng.standard_normal(4)) for x in everyone])
    store.vectors.put_many(large, [(x.id, rng.standard_normal(6)) for x in everyone[::2]])
    store.vectors.set_active_model("test/4d")
    store.db.set_meta("consolidation.last_run", "2025-03-01T00:00:00.000000Z")

    session = store.sessions.create(title="Rome", provider="openai", model="gpt", now=T0)
    asked = store.sessions.add_message(session.id, "user", "What is my Rome budget?", now=T0)
    reply = store.sessions.add_message(
        session.id,
        "assistant",
        "",
        tool_calls=[StoredToolCall("call_1", "remember", '{"fact": "x"}')],
        now=T0 + timedelta(seconds=3),
    )
    recalled = RecalledMemory(
        id=a.id,
        type=MemoryType.SEMANTIC,
        content="Budget for Rome is 800 EUR",
        entities=("Rome",),
        created_at=T0,
        last_confirmed_at=T0,
        rank=1,
        ranks={"text": 1},
        rrf=0.0164,
        decay=0.98,
        weight=1.0,
        score=0.016,
        days_unconfirmed=1.5,
        tokens=12,
        floors={"text": LegVerdict("text", 1, True, 2.5, 1.0, "matched rome", {"rome": 2.5})},
    )
    record = RecallRecord(
        block="<memory>800</memory>",
        tokens=12,
        budget=1200,
        items=(recalled,),
        ranked=(recalled,),
        legs={"vector": "off", "text": "ok", "entity": "ok"},
        elapsed_ms=3.25,
    )
    store.sessions.update_message(
        reply.id,
        content="800 EUR.",
        memory_block="<memory>800</memory>",
        recall=record,
        input_tokens=10,
        output_tokens=3,
        reply_ms=1500,
    )
    # branches: the question edited (a sibling), then the first version shown again
    store.sessions.set_instructions(session.id, "Answer in euros.")
    store.sessions.add_message(
        session.id, "user", "And my Paris budget?", parent_id=None, now=T0 + timedelta(seconds=9)
    )
    store.sessions.select_branch(session.id, asked.id)
    gone = store.sessions.create(title="Old chat", now=T0 - timedelta(days=3))
    store.sessions.add_message(gone.id, "user", "hello", now=T0 - timedelta(days=3))
    store.sessions.delete(gone.id, now=T0)


def snapshot(store: StoreEngine) -> dict[str, object]:
    sessions = store.sessions.list(include_deleted=True)
    return {
        "memories": list(export_lines(store)),
        "sessions": [s.to_json() for s in sessions],
        "messages": [[m.to_json() for m in store.sessions.messages(s.id)] for s in sessions],
        "models": [(x.name, x.dimension) for x in store.vectors.models()],
        "active": store.vectors.active_model() and store.vectors.active_model().name,  # type: ignore[union-attr]
        "meta": store.db.meta_items(),
    }


def test_sqlite_to_postgres_to_sqlite_gives_identical_export_files(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, last = tmp_path / "first", tmp_path / "last"
    with Store.open(first) as store:
        fill(store)
        before = snapshot(store)
    assert main(["--data-dir", str(first), "memories", "export", str(tmp_path / "a.jsonl")]) == 0

    assert main(["--data-dir", str(first), "store", "copy", "--to", pg_url]) == 0
    assert "Copied 8 memories" in capsys.readouterr().out
    assert main(["store", "copy", "--from", pg_url, "--to", str(last)]) == 0
    assert main(["--data-dir", str(last), "memories", "export", str(tmp_path / "b.jsonl")]) == 0

    exported = (tmp_path / "a.jsonl").read_bytes()
    assert exported.count(b"\n") == 8
    assert (tmp_path / "b.jsonl").read_bytes() == exported
    with PostgresStore(pg_url) as server:
        assert snapshot(server) == before
    with Store.open(last) as copied, Store.open(first) as source:
        assert snapshot(copied) == before
        assert snapshot(source) == before  # the source was only read


def test_a_copy_that_stopped_is_finished_by_running_it_again(pg_url: str, data_dir: Path) -> None:
    with Store.open(data_dir) as source, PostgresStore(pg_url) as target:
        fill(source)
        for memory in source.memories.list(oldest_first=True)[:4]:  # a copy cut short
            with target.db.write() as conn:
                target.memories.insert(conn, memory)
        seen: list[tuple[str, int, int]] = []
        report = copy_store(source, target, progress=lambda *step: seen.append(step))
        assert (report.memories_copied, report.memories_already_there) == (4, 4)
        assert seen[0] == ("memories", 0, 8) and ("memories", 8, 8) in seen
        assert ("conversations", 2, 2) in seen
        again = copy_store(source, target)
        assert (again.memories_copied, again.conversations_copied) == (0, 0)
        assert snapshot(target) == snapshot(source)


def test_a_store_is_not_copied_onto_itself(data_dir: Path) -> None:
    with Store.open(data_dir) as store, pytest.raises(StoreError, match="onto itself"):
        copy_store(store, store)


def test_a_server_with_a_newer_schema_is_refused_and_left_untouched(pg_url: str) -> None:
    with PostgresStore(pg_url) as store:
        assert store.db.schema_version() == SCHEMA_VERSION
        kept = store.memories.add("Keep me")
        with store.db.write() as conn:
            conn.execute("UPDATE timothy_schema SET version = 99")
    with pytest.raises(StoreError, match="newer Timothy \\(schema 99"):
        PostgresStore(pg_url)
    assert main(["--store", pg_url, "memories", "list"]) == 1
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT version FROM timothy_schema").fetchall() == [(99,)]
        assert conn.execute("SELECT id FROM memories").fetchall() == [(kept.id,)]


def test_a_new_server_database_is_migrated_once_by_two_machines(pg_url: str) -> None:
    with PostgresStore(pg_url) as one, PostgresStore(pg_url) as two:
        one.memories.add("seen by both")
        assert [m.content for m in two.memories.list()] == ["seen by both"]
        assert two.db.schema_version() == one.db.schema_version() == SCHEMA_VERSION


def test_an_edit_made_on_another_machine_meanwhile_is_not_overwritten(pg_url: str) -> None:
    with PostgresStore(pg_url) as laptop, PostgresStore(pg_url) as desktop:
        fact = laptop.memories.add("I live in Paris")
        seen_on_laptop = laptop.memories.get(fact.id)
        theirs = desktop.memories.supersede(fact.id, "I live in Lyon")
        # The laptop still shows the version it read, and the owner edits that one.
        assert seen_on_laptop.status.value == "active"
        with pytest.raises(ChangedElsewhereError, match="changed on another machine") as caught:
            laptop.memories.supersede(seen_on_laptop.id, "I live in Marseille")
        assert caught.value.ours == "I live in Marseille"
        assert caught.value.theirs == "I live in Lyon"
        # Both versions are in the words the window shows.
        assert "“I live in Lyon”" in str(caught.value)
        assert "“I live in Marseille”" in str(caught.value)
        # Nothing was lost or overwritten: the desktop's edit stands, the chain is whole.
        chain = laptop.memories.chain(fact.id)
        assert [m.content for m in chain] == ["I live in Paris", "I live in Lyon"]
        assert chain[-1].id == theirs.id


def test_every_command_uses_the_store_the_flag_environment_or_settings_name(
    pg_url: str, data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert main(["--store", pg_url, "memories", "add", "From the flag"]) == 0
    monkeypatch.setenv(STORE_URL_ENV, pg_url)
    assert main(["memories", "add", "From the environment"]) == 0
    monkeypatch.delenv(STORE_URL_ENV)
    save_settings(Settings(store=StoreSettings(engine="postgres", url=pg_url)))
    assert main(["memories", "add", "From the settings"]) == 0
    capsys.readouterr()
    assert main(["store", "info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["engine"] == "postgres" and info["memories"] == 3
    assert "password" not in info["location"]
    with PostgresStore(pg_url) as server:
        assert {m.content for m in server.memories.list()} == {
            "From the flag",
            "From the environment",
            "From the settings",
        }
    save_settings(Settings())
    assert main(["store", "info", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["engine"] == "sqlite"
    with Store.open(data_dir) as local:
        assert local.memories.count() == 0


def test_the_password_comes_from_the_keyring_and_never_from_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = "postgresql://owner@nas.local:5433/timothy"
    assert "password" not in server_conninfo(url)
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("s3cret\n"))
    assert main(["store", "password", url]) == 0
    assert secrets.get_secret(store_password_key(url)) == "s3cret"
    conninfo = server_conninfo(url, sslmode="verify-full", ca_file=str(tmp_path / "ca.pem"))
    assert "password=s3cret" in conninfo
    assert "sslmode=verify-full" in conninfo and f"sslrootcert={tmp_path / 'ca.pem'}" in conninfo
    # A password typed into the settings' URL is refused; the section keeps its defaults.
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"store": {"engine": "postgres", "url": f"{url[:13]}o:pw@x/db"}}))
    assert load_settings(path).store == StoreSettings()
    with pytest.raises(InvalidInputError, match="keyring"):
        StoreSettings(engine="postgres", url="postgresql://o:pw@x/db").check()


def test_tls_options_reach_the_server_driver(pg_url: str, tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    settings = StoreSettings(engine="postgres", url=pg_url, sslmode="verify-full", ca_file=str(ca))
    # (The test server listens on a Unix socket, where libpq uses no TLS; what matters here
    # is that the store hands the options to the driver as they are.)
    store = open_store(settings=settings)
    try:
        assert isinstance(store, PostgresStore)
        assert "sslmode=verify-full" in store.db.conninfo
        assert f"sslrootcert={ca}" in store.db.conninfo
    finally:
        store.close()


def test_a_server_that_does_not_answer_is_said_plainly(tmp_path: Path) -> None:
    url = f"postgresql://nobody@/nothing?host={tmp_path}&connect_timeout=2"
    with pytest.raises(StoreError, match=r"did not answer.*running and reachable"):
        PostgresStore(url)


def test_doctor_asks_the_chosen_server_what_it_is(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from timothy.health import self_checks

    assert "memory server" not in [check.name for check in self_checks()]
    monkeypatch.setenv(STORE_URL_ENV, pg_url)
    [server] = [check for check in self_checks() if check.name == "memory server"]
    assert server.ok and "PostgreSQL 16" in server.detail and "pgvector" in server.detail


def test_an_export_file_imports_into_a_server_store_as_it_was(
    pg_url: str, data_dir: Path, tmp_path: Path
) -> None:
    with Store.open(data_dir) as store:
        fill(store)
    exported = tmp_path / "memories.jsonl"
    assert main(["memories", "export", str(exported)]) == 0
    assert main(["--store", pg_url, "memories", "import", str(exported)]) == 0
    assert main(["--store", pg_url, "memories", "export", str(tmp_path / "again.jsonl")]) == 0
    assert (tmp_path / "again.jsonl").read_bytes() == exported.read_bytes()
    # All or nothing there too: importing the same file again is refused, nothing written.
    assert main(["--store", pg_url, "memories", "import", str(exported)]) == 1
    with PostgresStore(pg_url, follow_changes=False) as server:
        assert server.memories.count() == 8
