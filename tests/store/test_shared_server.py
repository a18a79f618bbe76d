"""Two machines on one PostgreSQL server (two stores in one test): what one does reaches the
other within 2 s, and the daily consolidation runs once between them."""

from __future__ import annotations

import queue
import threading
from datetime import UTC, datetime, timedelta

from timothy.memory.consolidation import DAILY_LOCK, consolidate_if_due
from timothy.memory.embedding import EmbeddingQueue
from timothy.providers.factory import local_embedder
from timothy.store.postgres import PostgresStore
from timothy.store.records import Memory

NOW = datetime(2025, 6, 1, 8, 0, tzinfo=UTC)
PROPAGATION_SECONDS = 2.0


def follow(store: PostgresStore) -> queue.Queue[tuple[str, Memory]]:
    heard: queue.Queue[tuple[str, Memory]] = queue.Queue()
    store.memories.listeners.append(lambda event, memory: heard.put((event, memory)))
    assert store.changes is not None and store.changes.listening.wait(10)
    return heard


def test_what_one_machine_does_the_other_hears_within_two_seconds(pg_url: str) -> None:
    with PostgresStore(pg_url) as laptop, PostgresStore(pg_url) as desktop:
        on_desktop = follow(desktop)
        on_laptop = follow(laptop)

        staged = laptop.memories.stage("My sister lives in Lyon", entities=["Zoë"])
        event, memory = on_desktop.get(timeout=PROPAGATION_SECONDS)
        assert (event, memory) == ("staged", staged)

        laptop.memories.promote(staged.id)
        event, memory = on_desktop.get(timeout=PROPAGATION_SECONDS)
        assert event == "promoted" and memory.status.value == "active"

        # A recall's retrieval stamp is not a change the owner sees: nothing is announced,
        # so the next thing heard is the edit after it.
        laptop.memories.mark_retrieved([staged.id])
        edited = laptop.memories.supersede(staged.id, "My sister lives in Paris")
        assert on_desktop.get(timeout=PROPAGATION_SECONDS) == ("superseded", edited)

        laptop.memories.forget([edited.id])
        event, memory = on_desktop.get(timeout=PROPAGATION_SECONDS)
        assert event == "forgotten" and memory.id == edited.id and memory.content == ""

        # And the other way. The laptop's listeners heard its own writes as it made them;
        # once it hears the desktop's, it has read every announcement before it, and none
        # of its own writes came back to it a second time.
        added = desktop.memories.add("I take the train to work")
        events = [on_laptop.get(timeout=PROPAGATION_SECONDS)[0] for _ in range(5)]
        assert events == ["staged", "promoted", "superseded", "forgotten", "added"]
        assert on_laptop.empty()
        assert desktop.memories.get(added.id) == added


def test_daily_consolidation_runs_once_across_machines(pg_url: str) -> None:
    with PostgresStore(pg_url) as laptop, PostgresStore(pg_url) as desktop:
        laptop.memories.add("We went to Rome", type="episodic", now=NOW - timedelta(days=400))
        with laptop.exclusive(DAILY_LOCK) as mine:
            assert mine
            # The desktop finds the run held by the laptop: it does nothing.
            assert consolidate_if_due(desktop, None, now=NOW) is None
        report = consolidate_if_due(laptop, None, now=NOW)
        assert report is not None and len(report.archived) == 1
        # Done for the day, whichever machine asks next.
        assert consolidate_if_due(desktop, None, now=NOW + timedelta(hours=1)) is None
        assert consolidate_if_due(laptop, None, now=NOW + timedelta(hours=1)) is None
        assert consolidate_if_due(desktop, None, now=NOW + timedelta(hours=25)) is not None


def test_two_machines_asking_at_once_run_it_once(pg_url: str) -> None:
    with PostgresStore(pg_url) as laptop, PostgresStore(pg_url) as desktop:
        laptop.memories.add("We went to Rome", type="episodic", now=NOW - timedelta(days=400))
        start = threading.Barrier(2)
        ran: list[object] = []

        def machine(store: PostgresStore) -> None:
            start.wait()
            ran.append(consolidate_if_due(store, None, now=NOW))

        threads = [threading.Thread(target=machine, args=(s,)) for s in (laptop, desktop)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert len(ran) == 2 and sum(report is not None for report in ran) == 1


def test_only_the_machine_that_wrote_a_memory_embeds_it(pg_url: str) -> None:
    """The desktop hears the laptop's new memory and does not embed it again: it reads the
    vector the laptop writes (its vector leg follows the server's changes)."""
    embedder = local_embedder()
    with (
        PostgresStore(pg_url) as laptop,
        PostgresStore(pg_url) as desktop,
        EmbeddingQueue(desktop, embedder) as desktop_queue,
    ):
        on_desktop = follow(desktop)
        own = desktop.memories.add("I water the plants on Sundays")
        assert desktop_queue.wait_idle(30) and desktop_queue.embedded == 1
        assert on_desktop.get(timeout=PROPAGATION_SECONDS)[0] == "added"  # its own write

        # The laptop writes a memory and has not embedded it yet when the desktop hears it.
        added = laptop.memories.add("My sister lives in Lyon")
        assert on_desktop.get(timeout=PROPAGATION_SECONDS) == ("added", added)
        assert desktop_queue.wait_idle(30)
        assert desktop_queue.embedded == 1  # its own memory only
        model = desktop.vectors.require_model(embedder.model_id)
        assert desktop.vectors.get(added.id, model) is None

        # The laptop embeds its own; the desktop's vector leg finds it.
        with EmbeddingQueue(laptop, embedder) as laptop_queue:
            laptop_queue.submit(added)
            assert laptop_queue.wait_idle(30) and laptop_queue.embedded == 1
        query = embedder.embed_query("Where does my sister live?")
        assert desktop.search.vector(model, query, 1) == [added.id]
        assert own.id in desktop.search.vector(model, query, 2)
