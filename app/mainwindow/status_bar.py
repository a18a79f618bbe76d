"""The status bar: which model answers, whether vector search is on (and a re-embedding's
progress), the memory counts, and what consolidation did (its details one click away)."""

from __future__ import annotations

from datetime import datetime
from urllib.parse import urlparse

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QStatusBar, QToolButton, QWidget

from app.look.time_text import relative_time
from timothy.assistant import EmbeddingState
from timothy.memory.consolidation import ConsolidationReport
from timothy.settings import Settings

VECTOR_SEARCH_OFF = "Vector search off: no embedding provider"
CONSOLIDATION_WIDTH = 240  # px; the lines are short, the summary is in the tooltip and dialog
CHAT_WIDTH = 280  # px; a longer "server · model" is elided, whole in the tooltip
ITEM_GAP = 12  # px the bar puts around each item (an upper bound; checked by a test)
# Below this the vector search label gives way whole; above, a long one is elided into the
# room left (it says what the Re-embed button and the progress bar are about).
EMBEDDING_MIN_WIDTH = 120  # px
WIDGET_SIZE_MAX = 16_777_215  # Qt's QWIDGETSIZE_MAX (not exported by PySide6): no maximum
MEMORY_COUNTS_TIP = (
    "Active: the memories recall can use. In all: every record kept, with staged, rejected and "
    "archived ones and earlier versions of edited memories."
)
CONSOLIDATION_TIP = (
    "Daily tidy-up: merges near-duplicate memories, archives old episodes, lowers confidence "
    "in facts not confirmed for a long time. Click for what the last one did."
)


def chat_text(settings: Settings) -> str:
    if settings.chat_provider == "openai":
        base = settings.openai.base_url
        where = "OpenAI"
        if base:
            host = urlparse(base).netloc or base
            where = {
                "127.0.0.1:11434": "Ollama",
                "localhost:11434": "Ollama",
                "127.0.0.1:1234": "LM Studio",
                "localhost:1234": "LM Studio",
            }.get(host, host)
        return f"{where} · {settings.openai.chat_model}"
    if settings.chat_provider == "bedrock":
        return f"Amazon Bedrock · {settings.bedrock.chat_model}"
    return "No chat model"


def model_label(model_id: str) -> str:
    """A stored model's name as the owner knows it: "text-embedding-3-small", "local MiniLM"."""
    provider, _sep, name = model_id.partition("/")
    if provider == "local":
        return "all-MiniLM-L6-v2, on this computer"
    return name or model_id


def embedding_text(settings: Settings) -> str:
    """Before the providers are built: what the settings ask for."""
    provider = settings.embedding_provider
    if provider == "local":
        return "Vector search: on this computer"
    if provider == "openai":
        return f"Vector search: {settings.openai.embedding_model}"
    if provider == "bedrock":
        return f"Vector search: {settings.bedrock.embedding_model}"
    return VECTOR_SEARCH_OFF


def embedding_state_text(state: EmbeddingState) -> str:
    if state.problem is not None:
        return "Vector search off: the embedding provider is not set up"
    if state.configured is None:
        return VECTOR_SEARCH_OFF
    configured = model_label(state.configured)
    if state.active == state.configured or (state.active is None and not state.missing):
        text = f"Vector search: {configured}"
        return text + (f" · {state.missing:,} to embed" if state.missing else "")
    if state.active is None:
        return f"Vector search off until your memories are embedded with {configured}"
    return f"Vector search: {model_label(state.active)} · switching to {configured}"


def consolidation_text(last_run: datetime | None, running: bool, now: datetime) -> str:
    if running:
        return "Tidying memories…"
    if last_run is None:
        return "Tidy-up: not run yet"
    return f"Tidied {relative_time(last_run, now)}"


def report_text(report: ConsolidationReport) -> str:
    """A run's outcome in a few words; the summary is in the tooltip, the details a click
    away ("Tidied: 5 changes")."""
    if report.interrupted:
        return "Tidy-up interrupted"
    if report.failed:
        return "Tidy-up partly failed"
    changes = len(report.merged) + len(report.archived) + len(report.decayed)
    if not changes:
        return "Tidied: nothing to change"
    return f"Tidied: {changes} change{'' if changes == 1 else 's'}"


def _flat_button(parent: QWidget, tip: str) -> QPushButton:
    button = QPushButton(parent)
    button.setFlat(True)
    button.setToolTip(tip)
    button.setStyleSheet("QPushButton { border: none; padding: 0 6px; text-align: left; }")
    return button


class StatusBar(QStatusBar):
    settings_requested = Signal()
    consolidation_requested = Signal()  # show the last consolidation's details
    reembed_requested = Signal()
    backfill_stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizeGripEnabled(False)
        self.chat_label = _flat_button(self, "The chat model (click to change it)")
        self.chat_label.clicked.connect(self.settings_requested)
        self.embedding_label = QLabel(self)
        # What the label says whole (it may show elided) and the text it keeps room for:
        # during a re-embedding the count's widest form, so the bar and Stop do not shift
        # along as the count grows.
        self.embedding_text = ""
        self._embedding_tip = ""
        self._embedding_room_for = ""
        self.reembed_button = QToolButton(self)
        self.reembed_button.setText("Re-embed…")
        self.reembed_button.setAutoRaise(True)
        self.reembed_button.clicked.connect(self.reembed_requested)
        self.reembed_button.hide()
        self.progress = QProgressBar(self)
        self.progress.setMaximumWidth(160)
        self.progress.setMaximumHeight(14)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.stop_button = QToolButton(self)
        self.stop_button.setText("Stop")
        self.stop_button.setAutoRaise(True)
        self.stop_button.setToolTip("Stop embedding (what is done is kept)")
        self.stop_button.clicked.connect(self.backfill_stop_requested)
        self.stop_button.hide()
        self.memory_label = QLabel(self)
        self.consolidation_label = _flat_button(self, CONSOLIDATION_TIP)
        self.consolidation_text = ""
        self.consolidation_label.clicked.connect(self.consolidation_requested)
        self.addWidget(self.chat_label)
        self.addWidget(self.embedding_label)
        self.addWidget(self.progress)
        self.addWidget(self.stop_button)
        self.addWidget(self.reembed_button)
        self.addPermanentWidget(self.memory_label)
        self.addPermanentWidget(self.consolidation_label)
        # In a narrow window these give way, in this order, rather than be cut off.
        self.give_way = (self.consolidation_label, self.embedding_label, self.memory_label)

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._fit()
        super().resizeEvent(event)

    def _fit(self) -> None:
        """Show what fits: the chat model always, the others while there is room, in the
        order they are wanted (one that cannot be shown hides the less wanted after it too,
        rather than leave a later one in its place); vector search's label is elided into
        the room left before it gives way."""
        shown = [
            widget
            for widget in (self.chat_label, self.progress, self.stop_button, self.reembed_button)
            if not widget.isHidden()
        ]
        room = self.width() - sum(w.sizeHint().width() + ITEM_GAP for w in shown)
        for widget in reversed(self.give_way):  # the most wanted first
            if widget is self.embedding_label:
                room -= self._fit_embedding(room)
                continue
            need = widget.sizeHint().width() + ITEM_GAP
            fits = need <= room
            widget.setVisible(fits)
            room = room - need if fits else 0

    def _fit_embedding(self, room: int) -> int:
        """Show vector search's label in `room` px: whole, elided, or not at all. Returns the
        room it took."""
        label, text = self.embedding_label, self.embedding_text
        label.ensurePolished()  # the style sheet's font and padding
        label.setMinimumWidth(0)  # a label's size hint grows to its minimum: measured free
        label.setMaximumWidth(WIDGET_SIZE_MAX)
        metrics = label.fontMetrics()
        longest = max((text, self._embedding_room_for), key=metrics.horizontalAdvance)
        label.setText(longest)
        whole = label.sizeHint().width()  # with the style sheet's padding
        around = max(0, whole - metrics.horizontalAdvance(longest))
        if whole + ITEM_GAP <= room:
            shown, width = text, whole
        elif room - ITEM_GAP >= EMBEDDING_MIN_WIDTH:
            width = room - ITEM_GAP
            shown = metrics.elidedText(text, Qt.TextElideMode.ElideMiddle, width - around)
        else:
            label.setText(text)
            label.hide()
            return 0
        label.setText(shown)
        label.setFixedWidth(width)
        tip = "\n".join(filter(None, (text if shown != text else "", self._embedding_tip)))
        label.setToolTip(tip)
        label.show()
        return width + ITEM_GAP

    def _set_embedding(self, text: str, tip: str = "", *, room_for: str = "") -> None:
        self.embedding_text = text
        self._embedding_tip = tip
        self._embedding_room_for = room_for
        self.embedding_label.setText(text)
        self._fit()

    def _set_chat(self, text: str, tip: str) -> None:
        metrics = self.chat_label.fontMetrics()
        shown = metrics.elidedText(text, Qt.TextElideMode.ElideMiddle, CHAT_WIDTH)
        self.chat_label.setText(shown)
        self.chat_label.setToolTip(tip if shown == text else f"{text}\n{tip}")
        self._fit()

    # -- the chat model ----------------------------------------------------------------

    def show_settings(self, settings: Settings) -> None:
        self._set_chat(chat_text(settings), "The chat model (click to change it)")
        if self.progress.isHidden():
            self._set_embedding(embedding_text(settings))

    def show_chat_problem(self, settings: Settings, problem: str | None) -> None:
        if problem is None:
            self._set_chat(chat_text(settings), "The chat model (click to change it)")
        else:
            self._set_chat(f"{chat_text(settings)} · not set up", problem)

    # -- vector search -----------------------------------------------------------------

    def show_embedding(self, state: EmbeddingState, *, offer_reembed: bool = False) -> None:
        """Where vector search stands; with `offer_reembed`, a button to embed what is missing
        ("Re-embed…" during a switch of model, "Embed now" for memories the queue missed)."""
        if self.progress.isVisible():
            return  # the backfill's progress says more; shown again when it ends
        moving = state.switching and state.active is not None
        self.reembed_button.setText("Re-embed…" if moving else "Embed now")
        self.reembed_button.setToolTip(
            f"Embed the {state.missing:,} memories that have no vector for this model yet"
        )
        self.reembed_button.setVisible(offer_reembed)
        self._set_embedding(embedding_state_text(state), state.problem or "")

    def show_backfill(self, model_id: str, done: int, total: int) -> None:
        self.reembed_button.hide()
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.progress.show()
        self.stop_button.show()
        name = model_label(model_id)
        self._set_embedding(
            f"Embedding memories with {name}: {done:,} of {total:,}",
            room_for=f"Embedding memories with {name}: {total:,} of {total:,}",
        )

    def hide_backfill(self, outcome: str = "") -> None:
        """The re-embedding ended; `outcome` says how until vector search's state is read
        again (rather than a count that no longer moves)."""
        self.progress.hide()
        self.stop_button.hide()
        self._set_embedding(outcome or self.embedding_text)

    # -- memory ------------------------------------------------------------------------

    def show_memory_counts(self, active: int, total: int, staged: int) -> None:
        """ "12 active · 18 in all · 2 to confirm": what recall can use, every record kept
        (staged, rejected, archived and earlier versions too), and what waits for the owner."""
        text = f"{active:,} active · {total:,} in all"
        if staged:
            text += f" · {staged:,} to confirm"
        self.memory_label.setText(text)
        self.memory_label.setToolTip(MEMORY_COUNTS_TIP)
        self._fit()

    def show_consolidation(self, text: str, tip: str | None = None) -> None:
        """`text` (elided when long: the tooltip has it whole); clicking shows the details."""
        self.consolidation_text = text
        metrics = self.consolidation_label.fontMetrics()
        shown = metrics.elidedText(text, Qt.TextElideMode.ElideRight, CONSOLIDATION_WIDTH)
        self.consolidation_label.setText(shown)
        whole = text if shown != text else ""
        self.consolidation_label.setToolTip(
            "\n".join(filter(None, (whole, tip or CONSOLIDATION_TIP)))
        )
        self._fit()
