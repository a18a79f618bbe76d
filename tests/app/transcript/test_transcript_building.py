"""An opened conversation is built from its newest message upwards, a slice of widgets per
turn of the event loop: the window answers while a long one is still being built, the end
result is the whole conversation in order, another conversation cancels the build, and a
message that arrives meanwhile goes last."""

from __future__ import annotations

from datetime import timedelta

import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from app.mainwindow.main_window import MainWindow
from app.transcript import transcript_view
from app.transcript.code_block import CodeBlock
from app.transcript.markdown_blocks import split_markdown
from app.transcript.message_widget import MessageWidget
from app.transcript.notice import Notice
from app.transcript.summary_divider import SummaryDivider
from app.transcript.transcript_view import TranscriptView
from tests.app.conftest import WindowFactory, settle
from tests.fakes.openai_server import OpenAIServer
from timothy.chat.transcript import TranscriptMessage
from timothy.store import Memory, Store
from timothy.store.records import utc_now

CODE = "```python\n" + "".join(f"value_{n} = compute({n})  # step {n}\n" for n in range(30))
REPLY = "A reply with **Markdown**, a list:\n\n- one\n- two\n\n" + CODE + "```\n\nAnd prose after."


def conversation(count: int, *, prefix: str = "m") -> list[TranscriptMessage]:
    start = utc_now() - timedelta(days=1)
    return [
        TranscriptMessage(
            id=f"{prefix}{number}",
            role="user" if number % 2 == 0 else "assistant",
            content=f"Question {number}?" if number % 2 == 0 else f"Reply {number}. {REPLY}",
            created_at=start + timedelta(minutes=number),
        )
        for number in range(count)
    ]


def column(view: TranscriptView) -> list[QWidget]:
    """The transcript's widgets from top to bottom, as laid out."""
    layout = view.column_layout
    found = []
    for position in range(layout.count()):
        item = layout.itemAt(position)
        widget = item.widget() if item is not None else None
        if widget is not None:
            found.append(widget)
    return found


def shown_ids(view: TranscriptView) -> list[str | None]:
    return [w.message_id for w in column(view) if isinstance(w, MessageWidget | SummaryDivider)]


def make_view(qtbot: QtBot) -> TranscriptView:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    return view


def test_a_long_conversation_is_built_newest_first_a_slice_at_a_time(qtbot: QtBot) -> None:
    view = make_view(qtbot)
    messages = conversation(80)
    view.show_messages(messages)
    # The newest messages are there at once; not the whole conversation in one go.
    assert view.building
    assert 0 < len(view.messages) < len(messages)
    assert view.messages[-1].message_id == "m79"
    assert not view.is_empty()
    first_slice = len(view.messages)
    with qtbot.waitSignal(view.built, timeout=30_000):
        pass
    assert not view.building
    assert len(view.messages) > first_slice
    assert shown_ids(view) == [m.id for m in messages]
    assert [w.content for w in view.messages] == [m.content for m in messages]
    # Only the newest reply offers "Regenerate".
    regenerable = [w for w in view.messages if w.role == "assistant" and w.regenerate_button]
    assert [w.message_id for w in regenerable if not w.regenerate_button.isHidden()] == ["m79"]


def test_the_built_transcript_keeps_dividers_and_notices_in_place(
    qtbot: QtBot, store: Store
) -> None:
    memory: Memory = store.memories.add("The owner takes the night train to Porto")
    messages = conversation(60)
    summary = TranscriptMessage(
        id="summary", role="summary", content="Earlier turns", created_at=utc_now(), compacted=10
    )
    with_memory = messages[21]
    messages[21] = TranscriptMessage(
        id=with_memory.id,
        role=with_memory.role,
        content=with_memory.content,
        created_at=with_memory.created_at,
        remembered=(memory,),
    )
    messages.insert(10, summary)
    view = make_view(qtbot)
    view.show_messages(messages)
    with qtbot.waitSignal(view.built, timeout=30_000):
        pass
    assert shown_ids(view) == [m.id for m in messages]
    widgets = column(view)
    reply = next(w for w in widgets if isinstance(w, MessageWidget) and w.message_id == "m21")
    notice = view.notices[memory.id]
    holder = widgets[widgets.index(reply) + 1]
    assert isinstance(notice, Notice) and holder.isAncestorOf(notice), "the notice under its reply"
    assert view.dividers == [w for w in widgets if isinstance(w, SummaryDivider)]


def test_the_view_stays_at_the_end_while_older_messages_arrive_above(qtbot: QtBot) -> None:
    view = make_view(qtbot)
    view.show_messages(conversation(60))
    bar = view.verticalScrollBar()
    seen_at_end = []
    view.verticalScrollBar().rangeChanged.connect(
        lambda _low, high: seen_at_end.append(bar.value() == high)
    )
    with qtbot.waitSignal(view.built, timeout=30_000):
        pass
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum(), timeout=5000)
    assert seen_at_end and all(seen_at_end)
    assert view.jump_button.isHidden()


def test_what_the_owner_reads_stays_put_while_older_messages_arrive(qtbot: QtBot) -> None:
    view = make_view(qtbot)
    view.show_messages(conversation(120))
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: len(view.messages) >= 12, timeout=10_000)
    reading = view.messages[-6]

    def reading_it() -> bool:
        """The owner has scrolled up to a message built early on (once it is laid out)."""
        view.show_widget(reading)
        QApplication.processEvents()
        top = reading.mapTo(view.viewport(), reading.rect().topLeft()).y()
        return bar.value() < bar.maximum() - 100 and 0 <= top < view.viewport().height()

    qtbot.waitUntil(reading_it, timeout=10_000)
    for _ in range(3):
        QApplication.processEvents()
    viewport_top = reading.mapTo(view.viewport(), reading.rect().topLeft()).y()
    assert view.building, "older messages are still to come above"
    with qtbot.waitSignal(view.built, timeout=30_000):
        pass
    for _ in range(3):
        QApplication.processEvents()
    assert bar.value() < bar.maximum()
    assert reading.mapTo(view.viewport(), reading.rect().topLeft()).y() == viewport_top


def test_a_message_added_during_the_build_lands_last(qtbot: QtBot) -> None:
    view = make_view(qtbot)
    messages = conversation(60)
    view.show_messages(messages)
    assert view.building
    view.add_user_message("A new question while the old ones load")
    view.begin_reply()
    view.append_text("The answer.")
    view.end_reply()
    with qtbot.waitSignal(view.built, timeout=30_000):
        pass
    contents = [w.content for w in view.messages]
    assert contents[: len(messages)] == [m.content for m in messages]
    assert contents[len(messages) :] == ["A new question while the old ones load", "The answer."]
    assert column(view)[-1] is view.messages[-1]


def test_clearing_cancels_an_unfinished_build(qtbot: QtBot) -> None:
    view = make_view(qtbot)
    view.show_messages(conversation(60, prefix="old"))
    assert view.building
    view.show_messages(conversation(6, prefix="new"))
    with qtbot.waitSignal(view.built, timeout=30_000):
        pass
    # A few more event-loop turns: a build left running would add its messages now.
    for _ in range(5):
        QApplication.processEvents()
    assert shown_ids(view) == [f"new{n}" for n in range(6)]
    view.show_messages(conversation(60, prefix="gone"))
    view.clear()
    for _ in range(5):
        QApplication.processEvents()
    assert view.messages == [] and column(view) == [] and not view.building


def add_long_conversation(store: Store, title: str, count: int) -> str:
    session = store.sessions.create(title=title)
    for number in range(count):
        role = "user" if number % 2 == 0 else "assistant"
        text = f"{title} question {number}?" if role == "user" else f"{title} reply. {REPLY}"
        store.sessions.add_message(session.id, role, text)
    return session.id


def test_the_window_takes_typing_while_a_long_conversation_is_built(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    long_id = add_long_conversation(store, "Long", 80)
    window: MainWindow = make_window(server=openai_server)
    settle(qtbot, window.workers)
    window.open_conversation(long_id)
    transcript = window.chat.transcript
    qtbot.waitUntil(lambda: transcript.building, timeout=10_000)
    composer = window.chat.composer
    composer.input.setFocus()
    qtbot.keyClicks(composer.input, "typed while loading")
    assert composer.input.toPlainText() == "typed while loading"
    assert transcript.building, "the keys were taken before the conversation was whole"
    assert [c.id for c in window.sidebar.model.conversations()] == [long_id]
    with qtbot.waitSignal(transcript.built, timeout=30_000):
        pass
    stored = [m.content for m in store.sessions.messages(long_id)]
    assert [w.content for w in transcript.messages] == stored


def test_switching_conversation_mid_build_shows_only_the_new_one(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    long_id = add_long_conversation(store, "Long", 80)
    short_id = add_long_conversation(store, "Short", 4)
    window = make_window()
    settle(qtbot, window.workers)
    window.open_conversation(long_id)
    transcript = window.chat.transcript
    qtbot.waitUntil(lambda: transcript.building, timeout=10_000)
    window.open_conversation(short_id)
    settle(qtbot, window.workers)
    for _ in range(5):
        QApplication.processEvents()
    assert window.chat.conversation_id == short_id
    assert [w.content for w in transcript.messages] == [
        m.content for m in store.sessions.messages(short_id)
    ]
    assert all("Long" not in w.content for w in transcript.messages)


def test_the_first_slice_reaches_the_newest_reply(qtbot: QtBot) -> None:
    """Its recall is what the memory pane shows, named by the reply's time."""
    messages = conversation(20)
    start = messages[-1].created_at
    messages += [
        TranscriptMessage(
            id=f"late{number}",
            role="user",
            content=f"Unanswered question {number}, long enough to wrap in its bubble. " * 4,
            created_at=start + timedelta(minutes=number + 1),
        )
        for number in range(60)
    ]
    view = make_view(qtbot)
    view.show_messages(messages)
    newest_reply = view.last_assistant()
    assert newest_reply is not None and newest_reply.message_id == "m19"
    with qtbot.waitSignal(view.built, timeout=30_000):
        pass
    assert shown_ids(view) == [m.id for m in messages]


def test_a_reply_is_built_a_part_at_a_time_and_ends_whole(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its prose and code blocks each come in a slice of their own when a slice has no time
    to spare; the built reply holds every part, in order."""
    monkeypatch.setattr(transcript_view, "BUILD_SLICE_MS", 0)
    messages = conversation(6)
    view = make_view(qtbot)
    view.show_messages(messages)
    newest = view.messages[-1]
    assert newest.message_id == "m5"
    assert len(newest.markdown.parts) == 1 and newest.unfinished
    assert view.building
    with qtbot.waitSignal(view.built, timeout=30_000):
        pass
    assert shown_ids(view) == [m.id for m in messages]
    for widget in view.messages:
        if widget.role != "assistant":
            continue
        assert not widget.unfinished
        made = [
            (part.code if isinstance(part, CodeBlock) else part.markdown)
            for part in widget.markdown.parts
        ]
        assert made == [segment.text for segment in split_markdown(widget.content)]


def test_a_search_hit_in_a_reply_still_being_built_is_marked(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hit's words may be in a part not made yet: the reply is made whole to mark them."""
    monkeypatch.setattr(transcript_view, "BUILD_SLICE_MS", 0)
    view = make_view(qtbot)
    view.show_messages(conversation(6), hit="m5", terms=["prose after"])
    hit = view.hit
    assert hit is not None and hit.message.message_id == "m5"
    assert hit.count == 1
    assert not hit.message.unfinished


def test_a_reply_on_screen_is_never_squeezed_while_older_ones_arrive(qtbot: QtBot) -> None:
    """Older messages go above the newest reply; it keeps its height all the while (a
    layout that squeezed it for a moment relaid and repainted the whole column each time)."""
    view = make_view(qtbot)
    view.show_messages(conversation(60))
    newest = view.messages[-1]
    qtbot.waitUntil(lambda: not newest.unfinished, timeout=10_000)
    for _ in range(3):
        QApplication.processEvents()
    heights: list[int] = []

    class Watch(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Resize:
                assert isinstance(event, QResizeEvent)
                heights.append(event.size().height())
            return False

    watch = Watch()
    newest.installEventFilter(watch)
    settled = newest.height()
    with qtbot.waitSignal(view.built, timeout=30_000):
        pass
    for _ in range(3):
        QApplication.processEvents()
    newest.removeEventFilter(watch)
    before = [settled, *heights][: len(heights)]
    assert all(later >= earlier for earlier, later in zip(before, heights, strict=True)), heights


def made_parts(widget: MessageWidget) -> list[str]:
    return [
        part.code if isinstance(part, CodeBlock) else part.markdown
        for part in widget.markdown.parts
    ]


STREAMED = "".join(
    f"Step {n} of the plan, with **bold** words.\n\n```python\nprint({n})\n```\n\n"
    for n in range(6)
)


def test_a_streaming_repaint_makes_its_new_parts_within_its_budget(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repaint that brings many prose and code blocks at once makes one at least and the
    rest at the next repaints, with or without new text; what is made is always the text's
    own parts, in order."""
    monkeypatch.setattr(transcript_view, "STREAM_PARTS_MS", 0)  # one new part a repaint
    view = make_view(qtbot)
    view.flush_timer.timeout.disconnect(view.flush)  # the test repaints
    reply = view.begin_reply()
    view.append_text(STREAMED[:200])
    view.flush()
    assert len(reply.markdown.parts) == 1 and reply.unfinished
    segments = split_markdown(STREAMED[:200])
    assert made_parts(reply) == [segments[0].text]
    view.flush()  # no new text: the next part waiting
    assert made_parts(reply) == [s.text for s in segments[:2]]
    view.append_text(STREAMED[200:])  # more text while parts wait
    repaints = 0
    while reply.unfinished:
        view.flush()
        repaints += 1
    whole = split_markdown(STREAMED)
    assert repaints == len(whole) - 2
    assert made_parts(reply) == [s.text for s in whole]
    view.end_reply()
    assert made_parts(reply) == [s.text for s in whole]


def test_a_reply_that_ends_with_parts_waiting_is_made_whole_after(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transcript_view, "STREAM_PARTS_MS", 0)
    view = make_view(qtbot)
    reply = view.begin_reply()
    view.append_text(STREAMED)
    view.end_reply()  # the last repaint made one part; the others come in slices after
    assert reply.unfinished
    assert reply.content == STREAMED
    with qtbot.waitSignal(view.built, timeout=30_000):
        pass
    assert not reply.unfinished and not view.building
    assert made_parts(reply) == [s.text for s in split_markdown(STREAMED)]
    assert [b.code for b in reply.markdown.code_blocks()] == [f"print({n})" for n in range(6)]


def test_a_reply_that_ends_while_an_older_one_is_made_is_made_whole_at_once(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transcript_view, "BUILD_SLICE_MS", 0)
    monkeypatch.setattr(transcript_view, "STREAM_PARTS_MS", 0)
    view = make_view(qtbot)
    view.show_messages(conversation(6))
    assert view.messages[-1].unfinished  # the opened conversation's newest, in parts
    reply = view.begin_reply()
    view.append_text(STREAMED)
    view.end_reply()
    assert not reply.unfinished
    assert made_parts(reply) == [s.text for s in split_markdown(STREAMED)]
    with qtbot.waitSignal(view.built, timeout=30_000):
        pass


class Resizes(QObject):
    """Counts the height changes of the widgets it watches (the width changes when the
    scroll bar comes)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            assert isinstance(event, QResizeEvent)
            if event.oldSize().height() != event.size().height():
                self.count += 1
        return False


def test_parts_already_made_are_not_squeezed_when_new_ones_arrive(qtbot: QtBot) -> None:
    """A part added to a reply used to squeeze the reply's other parts for one layout pass
    (the reply still had its old height) and let them grow back in the next: two resizes of
    every code block at every repaint, ~3,800 in a 40-block reply. The reply's parts keep
    their sizes while it grows."""
    view = make_view(qtbot)
    view.flush_timer.timeout.disconnect(view.flush)
    reply = view.begin_reply()
    text = ""
    for n in range(3):
        text += f"Step {n}.\n\n```python\nprint({n})\n```\n\n"
    view.append_text(text)
    view.flush()
    reply.markdown.finish()
    QApplication.processEvents()
    first = reply.markdown.code_blocks()[0]
    watcher = Resizes()
    first.installEventFilter(watcher)
    for n in range(3, 9):
        view.append_text(f"Step {n}.\n\n```python\nprint({n})\n```\n\n")
        view.flush()
        QApplication.processEvents()
    assert len(reply.markdown.code_blocks()) == 9
    assert watcher.count == 0


def test_a_divider_fits_a_narrow_pane_rather_than_widen_the_column(qtbot: QtBot) -> None:
    # The chat pane between the conversation list and the memory pane is ~400 px wide; a
    # divider that would not shrink below its one-line width pushed every message's right
    # edge (the owner's bubbles, the error notes) out of sight.
    messages = conversation(4)
    summary = TranscriptMessage(
        id="summary", role="summary", content="Earlier turns", created_at=utc_now(), compacted=12
    )
    view = make_view(qtbot)
    view.resize(400, 600)
    view.show_messages([*messages[:2], summary, *messages[2:]])
    qtbot.waitUntil(lambda: len(view.dividers) == 1, timeout=10_000)
    qtbot.waitUntil(lambda: view.column.width() <= view.viewport().width(), timeout=2_000)
    [divider] = view.dividers
    assert divider.label.text() == "12 earlier messages summarised for the model"
    assert divider.geometry().right() <= view.viewport().width()
