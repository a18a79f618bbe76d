"""Scrolled up during a streaming reply, the transcript stays where the owner is and offers
"Jump to latest", which goes back to the bottom and follows the reply again."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractSlider, QApplication
from pytestqt.qtbot import QtBot

from app.transcript.transcript_view import JUMP_TEXT, TranscriptView

PARAGRAPH = "A line of the reply that keeps coming, long enough to wrap once or twice. " * 3


def streaming_view(qtbot: QtBot) -> TranscriptView:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(700, 400)
    view.show()
    qtbot.waitExposed(view)
    view.add_user_message("Tell me a long story")
    view.begin_reply()
    bar = view.verticalScrollBar()
    for number in range(16):
        view.append_text(f"{number}. {PARAGRAPH}\n\n")
    qtbot.waitUntil(lambda: bar.maximum() > 400, timeout=5000)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=3000)
    return view


def grow(qtbot: QtBot, view: TranscriptView, paragraphs: int = 4) -> None:
    """More of the reply arrives and is painted."""
    bar = view.verticalScrollBar()
    before = bar.maximum()
    for number in range(paragraphs):
        view.append_text(f"More {number}. {PARAGRAPH}\n\n")
    qtbot.waitUntil(lambda: bar.maximum() > before, timeout=5000)
    QApplication.processEvents()


def test_scrolling_up_mid_stream_stops_following_and_the_button_brings_it_back(
    qtbot: QtBot,
) -> None:
    view = streaming_view(qtbot)
    bar = view.verticalScrollBar()
    assert view.following and not view.jump_button.isVisible()
    grow(qtbot, view)
    assert bar.value() == bar.maximum(), "at the bottom, the view follows the reply"

    bar.triggerAction(QAbstractSlider.SliderAction.SliderToMinimum)  # the owner scrolls up
    assert bar.value() == 0
    assert not view.following
    assert view.jump_button.isVisible() and view.jump_button.text() == JUMP_TEXT
    grow(qtbot, view)
    assert bar.value() == 0, "new text no longer pulls the owner down"
    # The button floats over the transcript's bottom edge, centred.
    area = view.viewport().geometry()
    button = view.jump_button.geometry()
    assert area.contains(button)
    assert abs(button.center().x() - area.center().x()) <= 1
    assert area.bottom() - button.bottom() < 40

    qtbot.mouseClick(view.jump_button, Qt.MouseButton.LeftButton)
    assert bar.value() == bar.maximum()
    assert view.following and not view.jump_button.isVisible()
    grow(qtbot, view)
    assert bar.value() == bar.maximum(), "following again"
    view.end_reply()


def test_a_mouse_wheel_up_also_stops_following(qtbot: QtBot) -> None:
    view = streaming_view(qtbot)
    bar = view.verticalScrollBar()
    at = view.viewport().rect().center()
    wheel = QWheelEvent(
        at,
        view.viewport().mapToGlobal(at),
        QPoint(0, 0),
        QPoint(0, 360),  # three notches up
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(view.viewport(), wheel)
    assert bar.value() < bar.maximum()
    assert view.jump_button.isVisible()
    top = bar.value()
    grow(qtbot, view)
    assert bar.value() == top
    view.end_reply()
    assert view.jump_button.isVisible(), "still offered once the reply is over"


def test_at_the_bottom_there_is_no_button(qtbot: QtBot) -> None:
    view = streaming_view(qtbot)
    grow(qtbot, view)
    view.end_reply()
    assert not view.jump_button.isVisible()


def test_a_new_turn_after_a_search_hit_follows_the_reply(qtbot: QtBot) -> None:
    view = streaming_view(qtbot)
    grow(qtbot, view)
    view.end_reply()
    first = view.messages[0]
    first.message_id = "01FIRSTMESSAGE"
    assert view.reveal("01FIRSTMESSAGE", ["story"]) is first
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.value() == 0, timeout=3000)
    assert view.jump_button.isVisible()
    view.add_user_message("And then?")
    view.begin_reply()
    grow(qtbot, view)
    assert bar.value() == bar.maximum(), "the new reply is followed, not the old hit"
    view.end_reply()
    assert not view.jump_button.isVisible()
    view.hide()
    view.clear()
    view.show()
    assert not view.jump_button.isVisible(), "no button over an empty transcript"
