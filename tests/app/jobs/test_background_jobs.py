"""The window's long background jobs against a real store and the fake OpenAI server:
re-embedding memories (at start-up, and when the owner switches model: offered, with
progress, a stop, and vector search moving only when it is complete), and daily
consolidation (run when due on a worker, "Consolidating…", the summary line, the details a
click away, cancelled on quit).
"""

from __future__ import annotations

import json
import threading
from datetime import timedelta

from pytestqt.qtbot import QtBot

from app.jobs.consolidation_dialog import ConsolidationDialog
from app.mainwindow.main_window import MainWindow
from tests.app.conftest import WindowFactory, chat_settings, settle
from tests.app.many_memories import add_many
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.script import Step
from timothy.memory.consolidation import consolidate, last_report, last_run
from timothy.memory.embedding import backfill
from timothy.providers.factory import embedding_provider
from timothy.settings import Settings
from timothy.store import MemoryStatus, MemoryType, Store
from timothy.store.records import utc_now

SMALL = "openai/text-embedding-3-small"
LARGE = "openai/text-embedding-3-large"


def embedding_settings(server: OpenAIServer, model: str = "text-embedding-3-small") -> Settings:
    settings = chat_settings(server, embedding_provider="openai")
    return settings.replace(openai=server.settings(embedding_model=model))


def slow_embeddings(server: OpenAIServer, seconds: float) -> None:
    """Every embeddings request answers after `seconds` (a slow provider, so progress shows)."""
    server.script.push(Step(delay=seconds), on="embeddings", times=None)


def wait_jobs(qtbot: QtBot, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: not window.jobs.busy, timeout=20_000)
    settle(qtbot, window.workers, window.network)


# -- embeddings ------------------------------------------------------------------------


def test_start_up_embeds_what_lacks_a_vector_with_progress(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    add_many(store, 70)
    slow_embeddings(openai_server, 0.15)
    seen: list[tuple[int, int, bool, str]] = []
    window: list[MainWindow] = []

    def progressed(done: int, total: int) -> None:
        status = window[0].status
        seen.append((done, total, status.progress.isVisible(), status.embedding_label.text()))

    made = make_window(settings=embedding_settings(openai_server))
    window.append(made)
    made.upkeep.backfill.progressed.connect(progressed)  # connected after the window's own slot
    wait_jobs(qtbot, made)
    assert seen, "no progress was reported"
    assert seen[-1][:2] == (70, 70)
    middle = [s for s in seen if 0 < s[0] < 70]
    assert middle and all(visible for _d, _t, visible, _text in middle)
    assert middle[0][3] == f"Embedding memories with text-embedding-3-small: {middle[0][0]} of 70"
    assert not made.status.progress.isVisible()
    active = store.vectors.active_model()
    assert active is not None and active.name == SMALL
    qtbot.waitUntil(
        lambda: made.status.embedding_label.text() == "Vector search: text-embedding-3-small",
        timeout=5000,
    )
    assert made.banner.text_label.text() == "Vector search now uses text-embedding-3-small."
    assert sum(len(r["input"]) for r in openai_server.embedding_requests) == 70
    # New memories are embedded by the queue as they are saved.
    fresh = store.memories.add("Learned to juggle")
    assistant = made.assistant
    assert assistant is not None and assistant.queue is not None
    assert assistant.queue.wait_idle(10)
    model = store.vectors.model(SMALL)
    assert model is not None and store.vectors.get(fresh.id, model) is not None


def test_switching_model_offers_to_re_embed_and_a_stop_keeps_the_old_model(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    add_many(store, 100)
    small = embedding_settings(openai_server)
    provider = embedding_provider(small)
    assert provider is not None and backfill(store, provider).switched
    window = make_window(settings=small)
    assert window.status.embedding_label.text() == "Vector search: text-embedding-3-small"
    assert window.status.reembed_button.isHidden()
    assert not window.upkeep.backfill.running
    # The owner picks another model in Settings: nothing is embedded until they say so.
    large = embedding_settings(openai_server, "text-embedding-3-large")
    assistant = window.assistant
    assert assistant is not None
    requests_before = len(openai_server.embedding_requests)
    with qtbot.waitSignal(assistant.configured, timeout=10_000):
        window.apply_settings(large)
    settle(qtbot, window.workers, window.network)
    assert window.banner.isVisible()
    assert window.banner.text_label.text() == (
        "Vector search still uses text-embedding-3-small. Re-embed 100 memories with "
        "text-embedding-3-large? Search moves to it when it is done."
    )
    assert window.status.embedding_label.text() == (
        "Vector search: text-embedding-3-small · switching to text-embedding-3-large"
    )
    assert not window.status.reembed_button.isHidden()
    assert len(openai_server.embedding_requests) == requests_before
    # Recall keeps embedding its queries with the model the vector leg searches.
    assert assistant.engine is not None and assistant.engine.recaller.embedder is not None
    assert assistant.engine.recaller.embedder.model_id == SMALL

    # Re-embed, then stop part-way: what was embedded stays, search stays on the old model.
    slow_embeddings(openai_server, 0.3)
    stopped = threading.Event()

    def stop_early(done: int, _total: int) -> None:
        if done > 0 and not stopped.is_set():
            stopped.set()
            window.status.stop_button.click()

    window.upkeep.backfill.progressed.connect(stop_early)
    window.banner.action_button.click()
    assert window.upkeep.backfill.running and window.banner.isHidden()
    with qtbot.waitSignal(window.upkeep.backfill.finished, timeout=20_000) as finished:
        pass
    result = finished.args[0]
    assert 0 < result.embedded < 100 and not result.complete and not result.switched
    assert store.vectors.active_model().name == SMALL
    wait_jobs(qtbot, window)
    qtbot.waitUntil(lambda: not window.status.reembed_button.isHidden(), timeout=5000)
    assert "switching to text-embedding-3-large" in window.status.embedding_label.text()

    # Again, to the end: search moves to the new model, and recall's query with it.
    window.upkeep.backfill.progressed.disconnect(stop_early)
    window.status.reembed_button.click()
    with qtbot.waitSignal(window.upkeep.backfill.finished, timeout=20_000) as finished:
        pass
    assert finished.args[0].switched and finished.args[0].complete
    wait_jobs(qtbot, window)
    assert store.vectors.active_model().name == LARGE
    qtbot.waitUntil(
        lambda: window.status.embedding_label.text() == "Vector search: text-embedding-3-large",
        timeout=5000,
    )
    assert window.banner.text_label.text() == "Vector search now uses text-embedding-3-large."
    assert assistant.engine.recaller.embedder is not None
    assert assistant.engine.recaller.embedder.model_id == LARGE


def test_a_vector_search_check_begun_before_a_model_switch_does_not_undo_it(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    # A check of where vector search stands, begun with the old settings (a memory changed,
    # say) and answered after the switch, must not put the old model back in the status
    # bar: the newest check wins.
    add_many(store, 20)
    small = embedding_settings(openai_server)
    provider = embedding_provider(small)
    assert provider is not None and backfill(store, provider).switched
    window = make_window(settings=small)
    settle(qtbot, window.workers, window.network)
    assistant = window.assistant
    assert assistant is not None
    # The switch is built, and its outcome waits for the GUI thread; meanwhile a check
    # begins with the settings still in use, and its outcome queues behind the switch's.
    window.apply_settings(embedding_settings(openai_server, "text-embedding-3-large"))
    assert window.network.pool.waitForDone(10_000)
    assistant.refresh_embedding()
    assert window.network.pool.waitForDone(10_000)
    settle(qtbot, window.workers, window.network)
    assert window.status.embedding_label.text() == (
        "Vector search: text-embedding-3-small · switching to text-embedding-3-large"
    )
    assert assistant.setup is not None
    assert assistant.setup.embedding.configured == LARGE


def test_an_embedding_provider_that_cannot_be_built_turns_vector_search_off_plainly(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    # OpenAI's own embeddings with no key anywhere; no chat model.
    window = make_window(settings=Settings(embedding_provider="openai"))
    settle(qtbot, window.workers, window.network)
    assert window.status.embedding_label.text() == (
        "Vector search off: the embedding provider is not set up"
    )
    assert "No OpenAI API key" in window.status.embedding_label.toolTip()
    assert window.banner.text_label.text().startswith("Vector search is off: No OpenAI API key")
    assert not window.upkeep.backfill.running


# -- consolidation ---------------------------------------------------------------------


def stale_memories(store: Store) -> tuple[str, str]:
    now = utc_now()
    episode = store.memories.add(
        "Went to a jazz concert in Porto", type="episodic", now=now - timedelta(days=200)
    )
    fact = store.memories.add("Works at Acme", type="semantic", now=now - timedelta(days=400))
    return episode.id, fact.id


def test_consolidation_runs_on_a_worker_when_due_and_shows_its_summary(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    episode, fact = stale_memories(store)
    window = make_window()
    assert window.status.consolidation_label.text() == "Tidy-up: not run yet"
    shown: list[str] = []
    threads: list[str] = []
    window.upkeep.consolidation.started.connect(
        lambda: shown.append(window.status.consolidation_label.text())
    )
    store.memories.listeners.append(
        lambda event, _m: threads.append(threading.current_thread().name)
    )
    with qtbot.waitSignal(window.upkeep.consolidation.finished, timeout=20_000) as finished:
        window.upkeep.tidy_up_now()  # the first run is the owner's call
    report = finished.args[0]
    assert shown == ["Tidying memories…"]
    assert threads and threading.main_thread().name not in threads  # off the GUI thread
    assert store.memories.get(episode).status is MemoryStatus.ARCHIVED
    assert store.memories.get(fact).confidence < 1.0
    summary = report.summary()
    assert "archived 1 old episode" in summary and "lowered confidence in 1" in summary
    # The line in the status bar is short; the summary is in its tooltip.
    assert window.status.consolidation_label.text() == "Tidied: 2 changes"
    assert summary in window.status.consolidation_label.toolTip()
    assert last_run(store) is not None
    # The details, one click away.
    window.status.consolidation_label.click()
    dialog = window.upkeep.consolidation_dialog
    assert isinstance(dialog, ConsolidationDialog) and dialog.isVisible()
    assert dialog.summary_label.text() == summary
    details = dialog.details_view.toPlainText()
    assert f"archived {episode}" in details and f"lowered {fact} confidence 1.00 -> " in details
    dialog.reject()
    # Not due again today: nothing runs, the line stays.
    with qtbot.waitSignal(window.upkeep.consolidation.not_due, timeout=10_000):
        window.upkeep.consolidate_if_due()
    assert window.status.consolidation_label.text() == "Tidied: 2 changes"


def test_the_first_tidy_up_asks_and_says_what_it_did(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    episode, fact = stale_memories(store)
    window = make_window(consolidation_delay_ms=0)
    upkeep = window.upkeep
    qtbot.waitUntil(lambda: upkeep.awaiting_approval, timeout=20_000)
    # Asked, nothing changed.
    assert window.banner.isVisible() and window.banner.action_button.text() == "Tidy up now"
    question = window.banner.text_label.text()
    assert "Tidy up your memories?" in question and "Nothing has been changed yet" in question
    assert store.memories.get(episode).status is MemoryStatus.ACTIVE
    assert store.memories.get(fact).confidence == 1.0
    assert last_report(store) is None
    assert window.status.consolidation_label.text() == "Tidy-up: waiting for your OK"
    # Dismissed, the status bar asks again.
    window.banner.dismiss()
    window.status.consolidation_label.click()
    assert window.banner.isVisible() and window.banner.action_button.text() == "Tidy up now"
    with qtbot.waitSignal(upkeep.consolidation.finished, timeout=20_000) as finished:
        window.banner.action_button.click()
    report = finished.args[0]
    assert store.memories.get(episode).status is MemoryStatus.ARCHIVED
    # What it did stays on screen until dismissed, with the details one click away.
    assert window.banner.isVisible() and window.banner.action_button.text() == "Details"
    assert report.summary() in window.banner.text_label.text()
    window.banner.action_button.click()
    dialog = upkeep.consolidation_dialog
    assert isinstance(dialog, ConsolidationDialog) and dialog.isVisible()
    assert f"archived {episode}" in dialog.details_view.toPlainText()
    dialog.reject()


def test_later_tidy_ups_run_by_themselves_with_a_short_status(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    consolidate(store, None, now=utc_now() - timedelta(days=2))  # agreed to, long ago
    rome = store.memories.add("Went to Rome", type="episodic", now=utc_now() - timedelta(days=400))
    window = make_window(consolidation_delay_ms=0)
    window.resize(window.minimumSize())
    qtbot.waitUntil(lambda: window.upkeep.consolidation.report is not None, timeout=20_000)
    assert not window.upkeep.awaiting_approval
    assert not window.banner.isVisible()
    assert store.memories.get(rome.id).status is MemoryStatus.ARCHIVED
    label = window.status.consolidation_label
    assert label.text() == "Tidied: 1 change"
    assert window.upkeep.consolidation.report.summary() in label.toolTip()
    # Whole, even at the window's minimum size.
    settle(qtbot, window.workers)
    assert "…" not in label.text()
    assert label.isVisible()
    assert label.width() >= label.fontMetrics().horizontalAdvance(label.text())


def test_a_recent_run_is_not_repeated_and_its_report_opens(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    episode, _fact = stale_memories(store)
    earlier = consolidate(store, None, now=utc_now() - timedelta(hours=2))
    window = make_window()
    with qtbot.waitSignal(window.upkeep.consolidation.not_due, timeout=10_000):
        window.upkeep.consolidate_if_due()
    assert window.status.consolidation_label.text() == "Tidied 2 h ago"
    assert window.upkeep.consolidation.report is None
    window.status.consolidation_label.click()
    qtbot.waitUntil(lambda: window.upkeep.consolidation_dialog is not None, timeout=5000)
    dialog = window.upkeep.consolidation_dialog
    assert dialog is not None and dialog.summary_label.text() == earlier.summary()
    assert episode in dialog.details_view.toPlainText()
    dialog.reject()


def test_quitting_interrupts_consolidation_and_the_next_run_finishes_it(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    settings = embedding_settings(openai_server)
    first = store.memories.add("The owner likes green tea", type=MemoryType.PREFERENCE)
    again = store.memories.add("The owner likes green tea.", type=MemoryType.PREFERENCE)
    other = store.memories.add("The owner lives in Lisbon", type=MemoryType.SEMANTIC)
    other_again = store.memories.add("The owner lives in Lisbon.", type=MemoryType.SEMANTIC)
    provider = embedding_provider(settings)
    assert provider is not None and backfill(store, provider).switched
    merged = json.dumps({"same_fact": True, "content": "The owner likes green tea"})
    openai_server.reply(merged, delay=1.0)  # the first merge is slow: the owner quits meanwhile
    window = make_window(settings=settings)
    with qtbot.waitSignal(window.upkeep.consolidation.started, timeout=10_000):
        window.upkeep.tidy_up_now()
    qtbot.waitUntil(lambda: len(openai_server.chat_requests) == 1, timeout=10_000)
    window.close()
    assert window.jobs.wait(10_000)
    report = last_report(store)
    assert report is not None and report.interrupted
    assert [g.members for g in report.merged] == [(first.id, again.id)]
    assert last_run(store) is None  # an interrupted run does not count: the next one runs
    assert store.memories.get(other.id).status is MemoryStatus.ACTIVE
    assert store.memories.get(other_again.id).status is MemoryStatus.ACTIVE
    assert len(openai_server.chat_requests) == 1


def test_a_stopped_re_embedding_says_what_it_kept_and_resumes_where_it_stopped(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    add_many(store, 100)
    small = embedding_settings(openai_server)
    provider = embedding_provider(small)
    assert provider is not None and backfill(store, provider).switched
    window = make_window(settings=small)
    assistant = window.assistant
    assert assistant is not None
    with qtbot.waitSignal(assistant.configured, timeout=10_000):
        window.apply_settings(embedding_settings(openai_server, "text-embedding-3-large"))
    settle(qtbot, window.workers, window.network)

    slow_embeddings(openai_server, 0.2)
    stopped = threading.Event()

    def stop_early(done: int, _total: int) -> None:
        if done > 0 and not stopped.is_set():
            stopped.set()
            window.status.stop_button.click()

    window.upkeep.backfill.progressed.connect(stop_early)
    window.banner.action_button.click()
    with qtbot.waitSignal(window.upkeep.backfill.finished, timeout=20_000) as finished:
        pass
    kept = finished.args[0].embedded
    assert 0 < kept < 100
    # Said, not only a status line that changes back: what is kept, what search uses, and
    # the offer to go on.
    assert window.banner.isVisible()
    assert window.banner.text_label.text() == (
        f"Embedding stopped after {kept} of 100 memories; what is done is kept. Vector search "
        "stays on text-embedding-3-small until every memory has a text-embedding-3-large "
        "vector."
    )
    assert window.banner.action_button.text() == "Resume"
    wait_jobs(qtbot, window)

    window.upkeep.backfill.progressed.disconnect(stop_early)
    openai_server.script.clear()
    window.banner.action_button.click()
    with qtbot.waitSignal(window.upkeep.backfill.finished, timeout=20_000) as finished:
        pass
    # Only what still had no vector for the new model.
    assert finished.args[0].switched and finished.args[0].total == 100 - kept
    wait_jobs(qtbot, window)
    assert window.banner.text_label.text() == "Vector search now uses text-embedding-3-large."
