"""The status bar during a re-embedding: the progress bar and Stop keep their place while the
count grows, and in a narrow window vector search's label is shortened, not dropped (it says
what the progress bar, Stop and Re-embed are about)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtWidgets import QApplication, QMainWindow
from pytestqt.qtbot import QtBot

from app.mainwindow.main_window import MINIMUM_SIZE
from app.mainwindow.status_bar import StatusBar
from timothy.assistant import EmbeddingState
from timothy.settings import OpenAISettings, Settings

SMALL = "openai/text-embedding-3-small"
LARGE = "openai/text-embedding-3-large"
SWITCHING = EmbeddingState(configured=LARGE, active=SMALL, missing=400)
SWITCHING_TEXT = "Vector search: text-embedding-3-small · switching to text-embedding-3-large"


def laid_out() -> None:
    for _ in range(3):
        QApplication.processEvents()


@pytest.fixture
def bar(qtbot: QtBot) -> Iterator[StatusBar]:
    window = QMainWindow()
    window.setMinimumSize(*MINIMUM_SIZE)  # as the main window's, which its items then fit
    status = StatusBar(window)
    window.setStatusBar(status)
    qtbot.addWidget(window)
    status.show_settings(Settings(chat_provider="openai", openai=OpenAISettings()))
    status.show_memory_counts(400, 400, 0)
    status.show_consolidation("Tidy-up: not run yet")
    window.resize(1200, 700)
    window.show()
    qtbot.waitExposed(window)
    laid_out()
    yield status
    window.close()


def resize(qtbot: QtBot, bar: StatusBar, width: int) -> None:
    window = bar.window()
    window.resize(width, 700)
    qtbot.waitUntil(lambda: bar.width() == width, timeout=5000)
    laid_out()


def test_the_progress_bar_and_stop_keep_their_place_as_the_count_grows(
    qtbot: QtBot, bar: StatusBar
) -> None:
    places = []
    for done in (0, 8, 96, 388, 400):
        bar.show_backfill(LARGE, done, 400)
        laid_out()
        assert bar.embedding_label.text().endswith(f"{done} of 400")
        assert bar.embedding_label.width() >= bar.embedding_label.sizeHint().width()
        places.append((bar.progress.x(), bar.stop_button.x()))
    assert len(set(places)) == 1, places


def test_in_a_narrow_window_vector_search_is_shortened_not_dropped(
    qtbot: QtBot, bar: StatusBar
) -> None:
    bar.show_embedding(SWITCHING, offer_reembed=True)
    laid_out()
    label = bar.embedding_label
    assert label.text() == SWITCHING_TEXT and label.isVisible()

    resize(qtbot, bar, MINIMUM_SIZE[0])
    assert label.isVisible(), "Re-embed… is left with nothing saying what it is about"
    assert "…" in label.text() and label.text().endswith("text-embedding-3-large")
    assert SWITCHING_TEXT in label.toolTip()  # whole, a hover away
    assert label.width() >= label.sizeHint().width()
    assert bar.reembed_button.isVisible() and bar.memory_label.isVisible()
    # The less wanted item gives way first, rather than keep its place beside a shortened one.
    assert not bar.consolidation_label.isVisible()
    right = label.x() + label.width()
    assert right <= bar.reembed_button.x()

    # During the re-embedding the count stays in sight.
    bar.show_backfill(LARGE, 96, 400)
    laid_out()
    assert label.isVisible() and label.text().endswith("96 of 400")
    assert label.x() + label.width() <= bar.progress.x()

    # Room again: whole, and everything back.
    bar.hide_backfill()
    bar.show_embedding(SWITCHING, offer_reembed=True)
    resize(qtbot, bar, 1300)
    assert label.text() == SWITCHING_TEXT
    assert bar.consolidation_label.isVisible()
