"""*To confirm* against a real store: staged facts appear newest first; confirm, reject,
edit-then-confirm, bulk actions and the keyboard all change the store as the owner meant."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem
from pytestqt.qtbot import QtBot

from app.jobs.workers import Workers
from app.memories.actions import MemoryActions
from app.memories.confirm_queue import ConfirmQueue
from app.memories.memory_list_model import MEMORY_ROLE
from tests.app.many_memories import add_many
from timothy.store import Memory, MemoryStatus, Store


@pytest.fixture
def queue(qtbot: QtBot, store: Store, workers: Workers) -> Iterator[ConfirmQueue]:
    actions = MemoryActions(store, workers)
    widget = ConfirmQueue(store, workers, actions, title_of=lambda session: f"Chat {session}")
    qtbot.addWidget(widget)
    widget.resize(420, 700)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget


def load(qtbot: QtBot, queue: ConfirmQueue) -> None:
    with qtbot.waitSignal(queue.loaded, timeout=5000):
        queue.reload()


def shown_ids(queue: ConfirmQueue) -> list[str]:
    return [memory.id for memory in queue.model.memories]


def select(queue: ConfirmQueue, *memories: Memory) -> None:
    queue.select_ids([memory.id for memory in memories])


def test_staged_facts_appear_newest_first_and_active_ones_do_not(
    qtbot: QtBot, store: Store, queue: ConfirmQueue
) -> None:
    older = store.memories.stage("Likes green tea", session_id="s1")
    newer = store.memories.stage("Runs on Sundays", type="episodic", entities=["running"])
    store.memories.add("Lives in Porto")
    load(qtbot, queue)
    assert shown_ids(queue) == [newer.id, older.id]
    assert queue.count_label.text() == "2 facts wait for you · newest first"
    assert queue.stack.currentWidget() is queue.view


def test_confirm_moves_a_fact_to_active(qtbot: QtBot, store: Store, queue: ConfirmQueue) -> None:
    fact = store.memories.stage("Allergic to peanuts", type="semantic")
    load(qtbot, queue)
    select(queue, fact)
    with qtbot.waitSignal(queue.memory_actions.memory_confirmed, timeout=5000) as confirmed:
        queue.buttons["confirm"].click()
    assert confirmed.args[0].id == fact.id
    assert store.memories.get(fact.id).status is MemoryStatus.ACTIVE
    assert store.memories.get(fact.id).last_confirmed_at is not None
    qtbot.waitUntil(lambda: shown_ids(queue) == [], timeout=5000)
    assert queue.stack.currentWidget() is queue.empty


def test_reject_refuses_a_fact(qtbot: QtBot, store: Store, queue: ConfirmQueue) -> None:
    fact = store.memories.stage("Hates cats")
    load(qtbot, queue)
    select(queue, fact)
    with qtbot.waitSignal(queue.memory_actions.memory_rejected, timeout=5000):
        queue.buttons["reject"].click()
    assert store.memories.get(fact.id).status is MemoryStatus.REJECTED


def test_bulk_confirm_and_bulk_reject(qtbot: QtBot, store: Store, queue: ConfirmQueue) -> None:
    facts = [store.memories.stage(f"Fact {n}") for n in range(5)]
    load(qtbot, queue)
    select(queue, facts[0], facts[1], facts[2])
    queue.buttons["confirm"].click()
    qtbot.waitUntil(lambda: len(shown_ids(queue)) == 2, timeout=5000)
    queue.select_all()
    queue.buttons["reject"].click()
    qtbot.waitUntil(lambda: shown_ids(queue) == [], timeout=5000)
    statuses = [store.memories.get(f.id).status for f in facts]
    assert statuses == [MemoryStatus.ACTIVE] * 3 + [MemoryStatus.REJECTED] * 2


def test_keyboard_drives_the_queue(qtbot: QtBot, store: Store, queue: ConfirmQueue) -> None:
    first = store.memories.stage("First proposal")
    second = store.memories.stage("Second proposal")
    third = store.memories.stage("Third proposal")
    load(qtbot, queue)
    queue.view.setFocus()
    qtbot.waitUntil(queue.view.hasFocus)
    # The newest card is current; Down moves to the next one.
    assert queue.current_memory() is not None and queue.current_memory().id == third.id
    qtbot.keyClick(queue.view, Qt.Key.Key_Down)
    assert queue.current_memory().id == second.id
    with qtbot.waitSignal(queue.memory_actions.memory_confirmed, timeout=5000):
        qtbot.keyClick(queue.view, Qt.Key.Key_C)
    qtbot.waitUntil(lambda: second.id not in shown_ids(queue), timeout=5000)
    # Focus stays on a card, so the next key acts on the card that moved up.
    current = queue.current_memory()
    assert current is not None and current.id == first.id
    with qtbot.waitSignal(queue.memory_actions.memory_rejected, timeout=5000):
        qtbot.keyClick(queue.view, Qt.Key.Key_R)
    qtbot.waitUntil(lambda: shown_ids(queue) == [third.id], timeout=5000)
    with qtbot.waitSignal(queue.memory_actions.memory_confirmed, timeout=5000):
        qtbot.keyClick(queue.view, Qt.Key.Key_Return)
    assert store.memories.get(second.id).status is MemoryStatus.ACTIVE
    assert store.memories.get(first.id).status is MemoryStatus.REJECTED
    assert store.memories.get(third.id).status is MemoryStatus.ACTIVE


def test_edit_then_confirm_supersedes_with_the_owners_wording(
    qtbot: QtBot, store: Store, queue: ConfirmQueue
) -> None:
    fact = store.memories.stage("Prefers aisle seats", type="preference", entities=["flights"])
    load(qtbot, queue)
    select(queue, fact)
    qtbot.keyClick(queue.view, Qt.Key.Key_E)
    editor = queue.editor
    assert editor is not None and editor.isVisible()
    assert editor.content_edit.toPlainText() == "Prefers aisle seats"
    editor.content_edit.setPlainText("Prefers window seats on night flights")
    editor.entities_edit.setText("flights, night")
    with qtbot.waitSignal(queue.memory_actions.memory_superseded, timeout=5000) as superseded:
        editor.buttons.button(editor.buttons.StandardButton.Save).click()
    new = superseded.args[0]
    assert new.status is MemoryStatus.ACTIVE
    assert new.content == "Prefers window seats on night flights"
    assert new.entities == ("flights", "night")
    assert new.supersedes == fact.id
    assert store.memories.get(fact.id).status is MemoryStatus.SUPERSEDED
    assert [m.id for m in store.memories.chain(new.id)] == [fact.id, new.id]
    qtbot.waitUntil(lambda: shown_ids(queue) == [], timeout=5000)


def test_editor_refuses_empty_text(qtbot: QtBot, store: Store, queue: ConfirmQueue) -> None:
    fact = store.memories.stage("Something")
    load(qtbot, queue)
    select(queue, fact)
    queue.open_editor()
    editor = queue.editor
    assert editor is not None
    editor.content_edit.setPlainText("   ")
    assert not editor.buttons.button(editor.buttons.StandardButton.Save).isEnabled()
    assert "needs some text" in editor.problem_label.text()


def test_invisible_characters_are_shown_on_the_card(
    qtbot: QtBot, store: Store, queue: ConfirmQueue
) -> None:
    fact = store.memories.stage(
        "Pay\u200b the invoice to \u202eaccount 99", entities=["bank\u200d"]
    )
    load(qtbot, queue)
    index = queue.model.index(0)
    memory = index.data(MEMORY_ROLE)
    option = QStyleOptionViewItem()
    option.rect = queue.view.visualRect(index)
    option.font = queue.view.font()
    layout = queue.delegate._layout(option.rect, memory, None, option.font)
    painted = layout.document.toPlainText()
    assert "⟨U+200B⟩" in painted and "⟨U+202E⟩" in painted
    assert "\u200b" not in painted and "\u202e" not in painted
    assert "U+200B" in layout.warning and "U+202E" in layout.warning
    assert any("⟨U+200D⟩" in label for label, _rect in layout.chips)
    assert memory.id == fact.id


def test_editor_names_invisible_characters_and_can_remove_them(
    qtbot: QtBot, store: Store, queue: ConfirmQueue
) -> None:
    fact = store.memories.stage("Call\u200b mum")
    load(qtbot, queue)
    select(queue, fact)
    queue.open_editor()
    editor = queue.editor
    assert editor is not None
    assert not editor.invisible_row.isHidden()
    assert "U+200B Zero Width Space" in editor.invisible_label.text()
    editor.strip_button.click()
    assert editor.content_edit.toPlainText() == "Call mum"
    assert editor.invisible_row.isHidden()


FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # 👨‍👩‍👧: three emoji joined by U+200D
RED_HEART = "\u2764\ufe0f"  # ❤️: a heart and the emoji-style selector
KEYCAP_ONE = "1\ufe0f\u20e3"  # 1️⃣


def test_emoji_are_drawn_whole_and_hidden_characters_still_marked(
    qtbot: QtBot, store: Store, queue: ConfirmQueue
) -> None:
    fact = store.memories.stage(
        f"Our family {FAMILY} {RED_HEART} cats, pay\u200bpal account {KEYCAP_ONE}",
        entities=[f"family {FAMILY}", "bank\u200d"],
    )
    load(qtbot, queue)
    index = queue.model.index(0)
    memory = index.data(MEMORY_ROLE)
    option = QStyleOptionViewItem()
    option.rect = queue.view.visualRect(index)
    option.font = queue.view.font()
    layout = queue.delegate._layout(option.rect, memory, None, option.font)
    painted = layout.document.toPlainText()
    assert FAMILY in painted and RED_HEART in painted and KEYCAP_ONE in painted
    assert "⟨U+200D⟩" not in painted and "⟨U+FE0F⟩" not in painted
    assert "pay⟨U+200B⟩pal" in painted  # inside a word it still hides something: shown
    assert "U+200B" in layout.warning and "U+200D" not in layout.warning
    assert any(FAMILY in label for label, _rect in layout.chips)
    assert any("bank⟨U+200D⟩" in label for label, _rect in layout.chips)
    select(queue, fact)
    queue.open_editor()
    editor = queue.editor
    assert editor is not None
    assert "U+200B" in editor.invisible_label.text()
    assert "U+200D Zero Width Joiner" in editor.invisible_label.text()  # the "bank" one
    assert "U+FE0F" not in editor.invisible_label.text()
    editor.strip_button.click()
    assert editor.content_edit.toPlainText() == (
        f"Our family {FAMILY} {RED_HEART} cats, paypal account {KEYCAP_ONE}"
    )
    assert editor.entities_edit.text() == f"family {FAMILY}, bank"
    assert editor.invisible_row.isHidden()


def test_source_link_opens_the_conversation(
    qtbot: QtBot, store: Store, queue: ConfirmQueue
) -> None:
    store.memories.stage("Wants a quiet hotel", session_id="session-42")
    load(qtbot, queue)
    index = queue.model.index(0)
    rect = queue.view.visualRect(index)
    memory = index.data(MEMORY_ROLE)
    layout = queue.delegate._layout(rect, memory, "Chat session-42", queue.view.font())
    assert layout.source == "Picked up in “Chat session-42”"
    point = QPointF(layout.source_rect.center())
    with qtbot.waitSignal(queue.source_clicked, timeout=3000) as clicked:
        for kind in (QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease):
            QApplication.sendEvent(
                queue.view.viewport(),
                QMouseEvent(
                    kind,
                    point,
                    queue.view.viewport().mapToGlobal(point),
                    Qt.MouseButton.LeftButton,
                    Qt.MouseButton.LeftButton
                    if kind == QEvent.Type.MouseButtonPress
                    else Qt.MouseButton.NoButton,
                    Qt.KeyboardModifier.NoModifier,
                ),
            )
    assert clicked.args == ["session-42"]


def test_a_queue_of_500_shows_its_first_cards_at_once_and_selects_all_of_them(
    qtbot: QtBot, store: Store, queue: ConfirmQueue
) -> None:
    add_many(store, 500, status=MemoryStatus.STAGED)
    load(qtbot, queue)
    # As the list arrives, the cards at the top are laid out (the rest follow in batches).
    first = queue.view.visualRect(queue.model.index(0))
    assert first.height() > 0 and queue.view.viewport().rect().intersects(first)
    assert queue.count_label.text().startswith("500 ")
    queue.select_all()  # before the later batches are laid out: every card, not those shown
    assert len(queue.selected_memories()) == 500
    queue.buttons["confirm"].click()
    qtbot.waitUntil(lambda: shown_ids(queue) == [], timeout=20_000)
    assert store.memories.count(status=MemoryStatus.STAGED) == 0
