"""`make screenshots`: render the main window in its main states to PNG files, offscreen.

Everything shown is real: the store, the panes, the settings dialog, and the chat engine,
whose replies stream from the fake OpenAI server of the tests (real HTTP on 127.0.0.1, the
real `openai` client), as do its titles, extracted facts and embeddings. Each run uses
throwaway data and config folders; the owner's own are never touched.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _isolate() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="timothy-shots-"))
    for name in ("DATA", "CONFIG", "CACHE", "LOG"):
        os.environ[f"TIMOTHY_{name}_DIR"] = str(folder / name.lower())
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    # A keyring that works (the test one, in the throwaway folder), as on a normal desktop.
    os.environ["TIMOTHY_TEST_KEYRING_FILE"] = str(folder / "keyring.json")
    os.environ["PYTHON_KEYRING_BACKEND"] = "tests.fakes.keyring_backend.FileKeyring"
    os.environ.pop("OPENAI_API_KEY", None)
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args(argv)
    scratch = _isolate()
    sys.path.insert(0, str(ROOT))
    from tests.fakes.openai_server import OpenAIServer

    try:
        with OpenAIServer() as server:
            return _render(args.out, scratch, server)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _render(out: Path, scratch: Path, server: object) -> int:
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication, QWidget

    from app.chat.local_servers import LocalServer
    from app.look import theme
    from app.mainwindow.main_window import MainWindow
    from app.mainwindow.window_state import WindowState
    from tests.fakes.openai_server import OpenAIServer
    from tests.fakes.script import Step, call
    from timothy.chat.settings import ChatSettings
    from timothy.memory.embedding import backfill
    from timothy.providers.factory import embedding_provider
    from timothy.settings import Settings
    from timothy.store import Store
    from timothy.store.records import utc_now

    assert isinstance(server, OpenAIServer)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    font = app.font()
    font.setFamily("DejaVu Sans")
    font.setPointSizeF(10)
    app.setFont(font)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def idle(window: MainWindow) -> bool:
        engines = window.assistant.engines() if window.assistant is not None else []
        return not (
            window.workers.busy
            or window.network.busy
            or window.jobs.busy
            or window.chat.streaming
            or not all(engine.wait_idle(0) for engine in engines)
        )

    def settle(window: MainWindow, quiet_ms: int = 400) -> None:
        """Run the event loop until no work is left and timers (reloads, repaints) had time."""
        deadline = time.monotonic() + 30
        quiet_since = time.monotonic()
        while time.monotonic() < deadline:
            app.processEvents()
            if not idle(window):
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > quiet_ms / 1000:
                return

    def wait_for(window: MainWindow, condition: Callable[[], bool], seconds: float = 20) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not condition():
            app.processEvents()

    def shoot(window: MainWindow, name: str, target: QWidget | None = None) -> None:
        settle(window)
        grab = (target or window).grab()
        path = out / f"{name}.png"
        grab.save(str(path))
        written.append(path)

    def chat_with_server(**changes: object) -> Settings:
        settings = Settings(chat_provider="openai", openai=server.settings(chat_model="gpt-4o"))
        return settings.replace(**changes) if changes else settings

    def build(
        scheme: Qt.ColorScheme,
        *,
        settings: Settings,
        fill: Callable[[Store], None] | None = None,
        servers: list[LocalServer] | None = None,
    ) -> MainWindow:
        theme.apply(app, scheme=scheme)
        server.script.clear()
        data = scratch / f"data-{len(written)}-{scheme.name}"
        store = Store.open(data)
        if fill is not None:
            fill(store)
        state = WindowState(data / "window.ini")
        window = MainWindow(
            store,
            settings=settings,
            window_state=state,
            probe_local_servers=lambda: list(servers or []),
            consolidation_delay_ms=None,
        )
        window.resize(1440, 900)
        window.splitter.setSizes([270, 730, 440])
        window.show()
        settle(window)
        return window

    def send(window: MainWindow, text: str) -> None:
        window.chat.composer.set_text(text)
        window.chat.composer.submit()

    now = utc_now()

    def conversations(store: Store) -> None:
        for title, age in (
            ("Weekend in Porto", timedelta(hours=2)),
            ("Sourdough starter schedule", timedelta(days=1, hours=3)),
            ("Quarterly budget review", timedelta(days=3)),
            ("Marathon training plan", timedelta(days=12)),
            ("Kyoto itinerary", timedelta(days=45)),
            ("Learning Rust lifetimes", timedelta(days=80)),
        ):
            session = store.sessions.create(title=title, now=now - age)
            store.sessions.add_message(session.id, "user", f"About {title.lower()}", now=now - age)
            store.sessions.add_message(session.id, "assistant", "Sure.", now=now - age)
        store.memories.add("Lives in Lisbon", type="semantic", entities=["Lisbon"])
        store.memories.add(
            "Prefers window seats on long train rides", type="preference", entities=["trains"]
        )
        store.memories.add("Sister is called Ana", type="semantic", entities=["Ana"])

    def session_titled(store: Store, prefix: str) -> str:
        return next(s.id for s in store.sessions.list() if s.title.startswith(prefix))

    def staged(store: Store) -> None:
        conversations(store)
        porto = session_titled(store, "Weekend")
        sourdough = session_titled(store, "Sourdough")
        store.memories.stage(
            "Is vegetarian, but eats fish when travelling",
            type="preference",
            entities=["food"],
            confidence=0.85,
            session_id=porto,
            now=now - timedelta(minutes=20),
        )
        store.memories.stage(
            "Feeds the sourdough starter at 8:00 and 20:00",
            type="procedural",
            entities=["sourdough"],
            confidence=0.9,
            session_id=sourdough,
            now=now - timedelta(hours=5),
        )
        store.memories.stage(
            "Trusted\u200b bank account for transfers: \u202e99 887 IBAN",
            type="semantic",
            entities=["bank"],
            confidence=0.55,
            session_id=porto,
            now=now - timedelta(hours=1),
        )
        store.memories.stage(
            "Ran the Lisbon half marathon in 1:52 last October",
            type="episodic",
            entities=["running", "Lisbon"],
            confidence=0.95,
            session_id=porto,
            now=now - timedelta(minutes=5),
        )

    reply_text = (
        "Here's a small script that lists trains from **Lisbon** to **Porto** and picks the "
        "fastest one with `min()`:\n\n"
        "> CP runs the Alfa Pendular and the Intercidades on this line.\n\n"
        "```python\n"
        "from dataclasses import dataclass\n\n"
        "@dataclass\n"
        "class Train:\n"
        "    name: str\n"
        "    minutes: int  # door to door\n\n"
        "def fastest(trains: list[Train]) -> Train:\n"
        "    return min(trains, key=lambda t: t.minutes)\n\n"
        "print(fastest([Train('Alfa Pendular', 170), Train('Intercidades', 195)]))\n"
        "```\n\n"
        "The *Alfa Pendular* is usually fastest. Since you prefer window seats, book seat "
        "numbers ending in **1** or **4**.\n\n"
        "- Book at least a week ahead for the cheapest fares\n"
        "- Trains leave from Santa Apolónia and Oriente\n"
    )
    question = "Write me a script to find the fastest train from Lisbon to Porto"
    facts = json.dumps(
        {
            "facts": [
                {
                    "content": "Is planning a weekend trip to Porto by train",
                    "type": "episodic",
                    "entities": ["Porto"],
                    "confidence": 0.8,
                }
            ]
        }
    )

    # 1. First run: no chat model yet; a local server is offered.
    window = build(
        Qt.ColorScheme.Light,
        settings=Settings(),
        servers=[LocalServer("Ollama", "http://127.0.0.1:11434/v1", ("llama3.2", "qwen2.5"))],
    )
    shoot(window, "01-first-run")
    window.close()

    # 2. A conversation: a streamed Markdown reply with code, a remembered fact, a staged
    #    one (light and dark). The model's words come from the fake server, turn by turn.
    for scheme, name in (
        (Qt.ColorScheme.Light, "02-conversation"),
        (Qt.ColorScheme.Dark, "05-conversation-dark"),
    ):
        window = build(scheme, settings=chat_with_server(), fill=conversations)
        remember = {
            "content": "Prefers to travel between cities by train",
            "type": "preference",
            "entities": ["trains"],
        }
        server.reply(tool_calls=[call("remember", remember)])
        server.reply(reply_text, interval=0.004)
        server.reply("Fastest train from Lisbon to Porto")  # the title
        server.reply(facts)  # extraction
        send(window, question)
        settle(window)
        window.memory_pane.open_recall_tab()
        window.chat.transcript.scroll_to_bottom()
        shoot(window, name)
        window.close()

    # 3. Mid-stream: the Stop button, a partial reply, the next message being typed.
    window = build(Qt.ColorScheme.Light, settings=chat_with_server(), fill=conversations)
    server.stall(reply_text, after=60)
    send(window, question)
    wait_for(window, lambda: len(window.chat.transcript.messages[-1].content) > 300)
    window.chat.composer.set_text("And what about returning on Sunday evening?")
    for _ in range(20):
        app.processEvents()
    path = out / "06-streaming.png"
    window.grab().save(str(path))
    written.append(path)
    window.chat.stop()
    settle(window)
    window.close()

    # 4. The queue with staged facts (one carrying invisible characters), two selected.
    for scheme, name in (
        (Qt.ColorScheme.Light, "03-confirm-queue"),
        (Qt.ColorScheme.Dark, "07-confirm-queue-dark"),
    ):
        window = build(scheme, settings=chat_with_server(), fill=staged)
        window.memory_pane.show_queue()
        settle(window)
        queue = window.memory_pane.queue
        assert queue is not None
        queue.select_ids([m.id for m in queue.model.memories[:2]])
        assert window.store is not None
        window.open_conversation(session_titled(window.store, "Weekend"))
        shoot(window, name)
        window.close()

    # 5. The version chain of an edited memory in Browse.
    def chain(store: Store) -> None:
        conversations(store)
        first = store.memories.stage(
            "Works at Acme as a data analyst",
            type="semantic",
            entities=["Acme", "work"],
            confidence=0.8,
            session_id=session_titled(store, "Quarterly"),
            now=now - timedelta(days=400),
        )
        second = store.memories.supersede(
            first.id, "Works at Acme as a senior data analyst", now=now - timedelta(days=200)
        )
        store.memories.supersede(
            second.id,
            "Works at Globex as head of analytics since March",
            entities=["Globex", "work"],
            now=now - timedelta(days=20),
        )
        for number in range(30):
            store.memories.add(
                f"Read “Book {number + 1}” and rated it {number % 5 + 1}/5",
                type="episodic",
                entities=["books"],
                now=now - timedelta(days=number * 3 + 1),
            )

    window = build(Qt.ColorScheme.Light, settings=chat_with_server(), fill=chain)
    window.memory_pane.focus_search()
    browser = window.memory_pane.browser
    assert browser is not None
    browser.search.setText("works at")
    settle(window)
    browser.apply_query()
    settle(window)
    active = next(m for m in browser.model.memories if m.status.value == "active")
    browser.select_memory(active.id)
    window.memory_pane.setMinimumWidth(480)
    window.splitter.setSizes([250, 690, 500])
    shoot(window, "04-chain-view")
    window.close()

    # 5b. The same 3-version chain in Browse at 1280x800 and at the window's minimum size,
    #     with the whole list (no search): the history gets the room it needs.
    window = build(Qt.ColorScheme.Light, settings=chat_with_server(), fill=chain)
    window.resize(1280, 800)
    window.splitter.setSizes([260, 600, 420])
    browser = window.memory_pane.browser
    assert browser is not None
    window.memory_pane.tabs.setCurrentWidget(browser)
    settle(window)
    active = next(
        m for m in window.store.memories.list(text="works at") if m.status.value == "active"
    )
    browser.show_memory(active.id)
    wait_for(window, lambda: len(browser.detail.chain_view.chain) == 3)
    shoot(window, "04b-browser-1280x800")
    window.resize(window.minimumSize())
    settle(window)
    shoot(window, "04c-browser-minimum-size")
    window.close()

    # 6. Settings: the model picker offers the server's own models (GET /v1/models).
    window = build(Qt.ColorScheme.Light, settings=chat_with_server())
    server.models = ["gpt-4o", "llama3.2", "qwen2.5:7b", "nomic-embed-text"]
    dialog = window.open_settings()
    dialog.resize(780, 600)
    settle(window)
    shoot(window, "08-settings", dialog)
    dialog.reject()
    window.close()

    # 7. Daily consolidation: merged near-duplicates (the merge written by the fake model),
    #    an archived episode, a lowered confidence; the summary line and the details.
    embedding = chat_with_server(embedding_provider="openai")

    def stale(store: Store) -> None:
        conversations(store)
        store.memories.add(
            "Went to a jazz concert at Casa da Música",
            type="episodic",
            now=now - timedelta(days=210),
        )
        store.memories.add("Works at Acme", type="semantic", now=now - timedelta(days=420))
        store.memories.add("Likes green tea in the morning", type="preference")
        store.memories.add("Likes green tea in the morning.", type="preference")
        provider = embedding_provider(embedding)
        assert provider is not None
        backfill(store, provider)

    window = build(Qt.ColorScheme.Light, settings=embedding, fill=stale)
    server.reply(json.dumps({"same_fact": True, "content": "Likes green tea in the morning"}))
    window.upkeep.consolidate_if_due()  # the first one asks before changing anything
    wait_for(window, lambda: window.upkeep.awaiting_approval)
    shoot(window, "09-consolidation-question")
    window.banner.action_button.click()  # Tidy up now
    wait_for(window, lambda: window.upkeep.consolidation.report is not None)
    shoot(window, "09-consolidation")
    assert window.memory_pane.fading is not None
    window.memory_pane.tabs.setCurrentWidget(window.memory_pane.fading)
    shoot(window, "09b-still-true", window.memory_pane)
    window.status.consolidation_label.click()
    report_dialog = window.upkeep.consolidation_dialog
    assert report_dialog is not None
    report_dialog.resize(820, 420)
    shoot(window, "10-consolidation-details", report_dialog)
    report_dialog.reject()
    window.close()

    # 8. Switching embedding model: the offer, then the re-embedding's progress.
    def embedded(store: Store) -> None:
        conversations(store)
        from tests.app.many_memories import add_many

        add_many(store, 400)
        provider = embedding_provider(embedding)
        assert provider is not None
        backfill(store, provider)

    window = build(Qt.ColorScheme.Light, settings=embedding, fill=embedded)
    large = embedding.replace(
        openai=server.settings(chat_model="gpt-4o", embedding_model="text-embedding-3-large")
    )
    window.apply_settings(large)
    settle(window)
    shoot(window, "11-reembed-offer")
    server.script.push(Step(delay=0.4), on="embeddings", times=None)
    window.banner.action_button.click()
    wait_for(
        window,
        lambda: window.status.progress.value() >= 128,
    )
    for _ in range(10):
        app.processEvents()
    path = out / "12-reembedding.png"
    window.grab().save(str(path))
    written.append(path)
    window.upkeep.backfill.cancel()
    settle(window)
    window.close()

    # 9. A long conversation, compacted: the divider, opened to the summary.
    from timothy.tokens import count_tokens

    day_one = (
        "**Day one, on foot.** Start with coffee at the Majestic on Rua de Santa Catarina, "
        "then walk down through the Bolhão market to the Sé. Cross the upper deck of the "
        "Dom Luís I bridge at midday for the view, and spend the afternoon in the port "
        "cellars of Vila Nova de Gaia (Graham's and Taylor's both take walk-ins).\n\n"
        "Come back across the lower deck at sunset and have dinner along the Ribeira."
    )
    day_two = (
        "**Day two, up the Douro.** The valley is the best day trip: vineyards terraced "
        "down to the river, quintas with tastings, and the train line runs along the water "
        "for most of the way.\n\nTake an early train from São Bento, stop at Peso da "
        "Régua or Pinhão, and book a tasting at a quinta within walking distance of the "
        "station so you need no car."
    )
    turns = [
        ("Plan a first day in Porto for me", day_one),
        ("And a second day, with a trip out of town?", day_two),
    ]
    third = "Which train should I take to the Douro?"
    before_second = sum(count_tokens(t) for t in (turns[0][0], day_one, turns[1][0]))
    before_third = before_second + count_tokens(day_two) + count_tokens(third)
    # The threshold falls between the second and third turns: the third one compacts.
    window_tokens = before_second + before_third  # x 0.5 = their midpoint
    compact = chat_with_server(
        chat=ChatSettings(
            context_window_tokens=window_tokens, compact_at_share=0.5, keep_recent_messages=2
        )
    )
    window = build(Qt.ColorScheme.Light, settings=compact, fill=conversations)
    no_facts = json.dumps({"facts": []})
    for number, (text, reply) in enumerate(turns):
        server.reply(reply)
        if number == 0:
            server.reply("Two days in Porto")
        server.reply(no_facts)
        send(window, text)
        settle(window)
    server.reply(no_facts)  # extraction over the turns about to be summarised
    server.reply(
        "The owner is planning two days in Porto: day one on foot (the Majestic, Bolhão, the "
        "Sé, the Dom Luís I bridge, the Gaia port cellars, dinner on the Ribeira); day two a "
        "train trip up the Douro valley to Régua or Pinhão with a quinta tasting."
    )
    server.reply(
        "Take the **9:25 from São Bento**: it reaches Pinhão at 11:40, and the last train "
        "back leaves at 18:05. Sit on the right-hand side for the river."
    )
    server.reply(no_facts)
    send(window, third)
    settle(window)
    wait_for(window, lambda: bool(window.chat.transcript.dividers))
    for divider in window.chat.transcript.dividers:
        divider.set_expanded(True)
    window.set_memory_pane_visible(False)
    settle(window)
    window.chat.transcript.scroll_to_bottom()
    shoot(window, "13-compaction")
    window.close()

    # 10. The smallest window, and 800x600: panes that do not fit give way, nothing is cut.
    for (width, height), name in (((0, 0), "14-minimum-size"), ((800, 600), "15-800x600")):
        window = build(Qt.ColorScheme.Light, settings=chat_with_server(), fill=staged)
        assert window.store is not None
        window.open_conversation(session_titled(window.store, "Weekend"))
        window.chat.composer.set_text("And on Sunday?\nBy train, please.")
        window.resize(width or window.minimumWidth(), height or window.minimumHeight())
        shoot(window, name)
        window.close()

    # 11. Help: keyboard shortcuts and About.
    window = build(Qt.ColorScheme.Light, settings=chat_with_server())
    shortcuts = window.show_shortcuts()
    settle(window)
    shoot(window, "16-shortcuts", shortcuts)
    shortcuts.reject()
    about = window.show_about()
    settle(window)
    shoot(window, "17-about", about)
    about.reject()
    window.close()

    # 12. Settings > Backups: daily, weekly, before a merge and by hand, with their counts;
    #     then the question before a restore.
    from datetime import UTC, datetime

    from timothy.store.backup_folder import BackupReason
    from timothy.store.backups import make_backup

    def with_backups(store: Store) -> None:
        staged(store)
        today = datetime.now(UTC).replace(hour=9, minute=30, second=0, microsecond=0)
        moments = [
            (today - timedelta(days=23), BackupReason.DAILY),
            (today - timedelta(days=16), BackupReason.DAILY),
            (today - timedelta(days=7), BackupReason.DAILY),
            (today - timedelta(days=6), BackupReason.DAILY),
            (today - timedelta(days=5, hours=-2), BackupReason.MERGE),
            (today - timedelta(days=4), BackupReason.DAILY),
            (today - timedelta(days=3), BackupReason.DAILY),
            (today - timedelta(days=2), BackupReason.DAILY),
            (today - timedelta(days=1), BackupReason.DAILY),
            (today - timedelta(hours=3), BackupReason.MANUAL),
        ]
        for number, (moment, reason) in enumerate(moments):
            store.memories.add(f"A fact written before backup {number}: the plan for day {number}")
            make_backup(store, now=moment, reason=reason)

    window = build(Qt.ColorScheme.Light, settings=chat_with_server(), fill=with_backups)
    dialog = window.open_settings("backups")
    dialog.resize(780, 600)
    page = dialog.backups_page
    wait_for(window, lambda: page.tree.topLevelItemCount() == 10)
    settle(window)
    shoot(window, "18-settings-backups", dialog)
    page.select(page.backups[2].path)
    page.request_restore()
    settle(window)
    assert window.store_restore is not None and window.store_restore.confirmation is not None
    shoot(window, "19-restore-question", window.store_restore.confirmation)
    window.store_restore.confirmation.reject()
    dialog.reject()
    window.close()

    # 13. Forget for good, with the box that removes it from the backups that hold it too.
    window = build(Qt.ColorScheme.Light, settings=chat_with_server(), fill=with_backups)
    browser = window.memory_pane.browser
    assert browser is not None and window.store is not None
    chosen = next(m for m in window.store.memories.list() if "backup 3:" in m.content)
    browser.ask_forget([chosen])
    wait_for(window, lambda: browser.forget_confirmation is not None)
    settle(window)
    assert browser.forget_confirmation is not None
    shoot(window, "20-forget-and-backups", browser.forget_confirmation)
    browser.forget_confirmation.reject()
    window.close()

    # 14. A conversation search's result: the transcript scrolled to the message that matched,
    #     the searched words marked, the message tinted for a moment.
    def long_trip(store: Store) -> None:
        conversations(store)
        start = now - timedelta(days=2)
        session = store.sessions.create(title="Two weeks in Spain", now=start)
        for number in range(14):
            answer = (
                f"**Day {number + 1}.** A museum in the morning, a long lunch, then a walk by "
                "the river in the evening; book dinner ahead on weekends. "
            ) * 2
            if number == 6:
                answer = (
                    "Take the **night train** from Lisbon to Hendaye on Friday and book a "
                    "couchette: they sell out a week ahead. From Hendaye the TGV reaches "
                    "Paris by noon, so Saturday is still yours."
                )
            moment = start + timedelta(minutes=5 * number)
            store.sessions.add_message(
                session.id, "user", f"What about day {number + 1}?", now=moment
            )
            store.sessions.add_message(session.id, "assistant", answer, now=moment)

    window = build(Qt.ColorScheme.Light, settings=chat_with_server(), fill=long_trip)
    window.sidebar.search.setText("night train")
    wait_for(window, lambda: any(c.message_id for c in window.sidebar.model.conversations()))
    window.sidebar.search.returnPressed.emit()  # Enter opens the first result
    wait_for(window, lambda: window.chat.transcript.hit is not None)
    shoot(window, "30-search-hit")
    window.close()

    # 15. Scrolled up while a long reply streams: the view stays put, "Jump to latest".
    window = build(Qt.ColorScheme.Light, settings=chat_with_server(), fill=conversations)
    server.stall(reply_text * 3, after=400)
    send(window, question)
    transcript = window.chat.transcript
    wait_for(window, lambda: transcript.verticalScrollBar().maximum() > 900)
    from PySide6.QtWidgets import QAbstractSlider

    bar = transcript.verticalScrollBar()
    bar.triggerAction(QAbstractSlider.SliderAction.SliderToMinimum)  # the owner scrolls up
    bar.setValue(bar.maximum() // 3)
    wait_for(window, lambda: transcript.jump_button.isVisible())
    for _ in range(20):
        app.processEvents()
    path = out / "31-jump-to-latest.png"
    window.grab().save(str(path))
    written.append(path)
    window.chat.stop()
    settle(window)
    window.close()

    # 16. Code blocks coloured by Pygments, per language (and a guess without a label),
    #     in the light and the dark theme.
    code_reply = (
        "Python, with SQL inside a string (the string stays a string):\n\n"
        "```python\n"
        "import sqlite3  # the standard library's driver\n\n"
        "def names(db: sqlite3.Connection, age: int = 30) -> list[str]:\n"
        '    """Everyone older than `age`, sorted."""\n'
        '    rows = db.execute("SELECT name FROM people WHERE age > ? ORDER BY name", (age,))\n'
        "    return [row[0] for row in rows]\n"
        "```\n\n"
        "The same in Rust:\n\n"
        "```rust\n"
        "fn names(people: &[(String, u32)], age: u32) -> Vec<&str> {\n"
        "    let mut found: Vec<&str> = people.iter()\n"
        "        .filter(|(_, a)| *a > age)  // older than age\n"
        "        .map(|(n, _)| n.as_str()).collect();\n"
        "    found.sort();\n"
        "    found\n"
        "}\n"
        "```\n\n"
        "And with no language named, Timothy guesses:\n\n"
        "```\n"
        "#!/bin/bash\n"
        'for f in *.csv; do sqlite3 people.db ".import $f people"; done\n'
        "```\n"
    )
    for scheme, name in (
        (Qt.ColorScheme.Light, "32-code-highlighting"),
        (Qt.ColorScheme.Dark, "33-code-highlighting-dark"),
    ):
        window = build(scheme, settings=chat_with_server(), fill=conversations)
        server.reply(code_reply)
        server.reply("Listing names by age")
        server.reply(json.dumps({"facts": []}))
        send(window, "Show me how to list people older than 30 from SQLite")
        settle(window)
        window.set_memory_pane_visible(False)
        settle(window)
        window.chat.transcript.scroll_to_bottom()
        shoot(window, name)
        window.close()

    # 17. Help ▸ User guide: the README's guide, rendered.
    window = build(Qt.ColorScheme.Light, settings=chat_with_server())
    guide = window.show_user_guide()
    wait_for(window, lambda: guide.loaded)
    shoot(window, "34-user-guide", guide)
    guide.reject()
    window.close()

    # 18. A reply with its usage line (model, tokens in and out, speed), regenerated once
    #     (its ‹ 2/2 › switcher), under an owner message that was edited (‹ 2/2 › too).
    window = build(Qt.ColorScheme.Light, settings=chat_with_server(), fill=conversations)
    no_facts = json.dumps({"facts": []})
    server.reply("Porto is three hours away by train.", usage=(1432, 9, 0), interval=0.02)
    server.reply("Lisbon to Porto")
    server.reply(no_facts)
    send(window, "How far is Porto from Lisbon?")
    settle(window)
    first = window.chat.transcript.messages[0]
    server.reply(
        "About **2 h 50 min** on the *Alfa Pendular*, 3 h 15 min on the Intercidades; "
        "trains leave roughly every hour from Santa Apolónia.",
        usage=(1466, 38, 0),
        interval=0.02,
    )
    server.reply(no_facts)
    window.chat.edit_message(first.message_id or "", "How long is the train from Lisbon to Porto?")
    settle(window)
    server.reply(
        "The fastest train, the *Alfa Pendular*, takes about **2 h 50 min**; the "
        "Intercidades about 3 h 15 min. Trains run roughly hourly from Santa Apolónia and "
        "Oriente.",
        usage=(1466, 41, 0),
        interval=0.02,
    )
    server.reply(no_facts)
    window.chat.regenerate()
    settle(window)
    shoot(window, "35-reply-usage-and-versions")
    window.close()

    # 19. A temporary chat: the tint, the banner, its switch on (light and dark).
    for scheme, name in (
        (Qt.ColorScheme.Light, "36-temporary-chat"),
        (Qt.ColorScheme.Dark, "37-temporary-chat-dark"),
    ):
        window = build(scheme, settings=chat_with_server(), fill=conversations)
        window.set_temporary_chat(True)
        server.reply(
            "Nothing from your memories is used here, and nothing you say is kept. Ask away.",
            usage=(512, 19, 0),
            interval=0.02,
        )
        send(window, "Is anything from this chat saved?")
        settle(window)
        shoot(window, name)
        window.close()

    for path in written:
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
