"""The conversation: turns in a centred column, the streaming reply, memory notices.

Text that streams in is buffered and painted on a timer, not per token: a fast model can
send hundreds of deltas a second and re-rendering Markdown for each would stall the window.
The timer backs off when a long reply makes each repaint expensive.

The view follows the reply while the owner is at the bottom; scrolled up, it stays where
they are and offers "Jump to latest". A search hit is revealed by scrolling to its first
marked word, which stays in place while the messages around it finish their layout.

An opened conversation is built from its newest message upwards, a few widgets per turn of
the event loop (`BUILD_SLICE_MS` each), so a long one never freezes the window: the newest
turns show at once, older ones appear above them while the view stays where the owner is
(at the bottom, at a search hit, or wherever they scrolled). Messages that arrive meanwhile
go below, as always; clearing the transcript (another conversation) cancels the build.
A reply is built a part at a time (its prose and code blocks), and a slice's budget counts
the relayout and paint that follow it, measured after each slice: a reply with a long code
block never holds the window for the whole of its making and painting at once.
"""

from __future__ import annotations

import html
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QMoveEvent, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QGraphicsDropShadowEffect,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.conversations.chat_port import TranscriptMessage
from app.look import theme
from app.look.text_direction import block_html, text_direction
from app.transcript.message_flash import MessageFlash
from app.transcript.message_widget import MessageWidget
from app.transcript.notice import Notice
from app.transcript.search_hit import SearchHighlight
from app.transcript.summary_divider import SummaryDivider
from timothy.store import Memory, MemoryStatus
from timothy.store.records import RecallRecord, utc_now

SERVER_AWAY_TEXT = (
    "The memory server is out of reach: this reply was written without your memories. "
    "The conversation is kept on this machine and reaches the server when it answers."
)

SERVER_REFUSED_TEXT = (
    "The memory server refused this computer's login ({why}): this reply was written without "
    "your memories. Check the address and the password in Settings ▸ Storage. The "
    "conversation is kept on this machine and reaches the server once it lets this computer in."
)

COLUMN_WIDTH = 820
REPLY_INDENT = 30  # where a reply's text starts, right of the avatar
STICK_MARGIN = 32  # px from the bottom that still counts as "following the reply"
JUMP_MARGIN = 16  # px between the "Jump to latest" button and the transcript's bottom edge
HIT_POSITION = 1 / 3  # a revealed search hit sits a third of the way down the view
JUMP_TEXT = "Jump to latest ↓"
BUILD_SLICE_MS = 12  # GUI-thread time spent building older messages per event-loop turn
STREAM_PARTS_MS = 8  # GUI-thread time a streaming reply's repaint spends making new parts
UNDO_TIP = "Reject this fact: Timothy stops recalling it (it stays listed under Browse ▸ Rejected)"
REJECTED_TIP = (
    "Rejected: never recalled, and kept under Browse ▸ Rejected so it is not proposed again"
)


def _short(text: str, limit: int = 140) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(eq=False)
class StagedFacts:
    """A "facts to confirm" notice and the proposals it still waits on."""

    notice: Notice
    total: int
    waiting: set[str]

    def text(self) -> str:
        left = len(self.waiting)
        noun = "fact" if self.total == 1 else "facts"
        if left == 0:
            return f"{self.total} new {noun} reviewed"
        if left == self.total:
            return f"{self.total} new {noun} to confirm"
        return f"{left} of {self.total} new {noun} still to confirm"


class TranscriptView(QScrollArea):
    regenerate_requested = Signal()
    edit_requested = Signal(str, str)  # (the owner message's id, its new text)
    version_requested = Signal(str)  # the id of the version to show
    recall_requested = Signal(object)  # the recall dict of the chosen turn, or None
    memory_undo_requested = Signal(object)  # the Memory the owner takes back (it is rejected)
    staged_review_requested = Signal()
    message_copied = Signal(str)
    built = Signal()  # every message of the conversation shown is on screen

    MIN_FLUSH_MS = 50
    MAX_FLUSH_MS = 250

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("TranscriptView")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        canvas = QWidget(self)
        outer = QHBoxLayout(canvas)
        outer.setContentsMargins(24, 16, 24, 16)
        outer.addStretch(1)
        self.column = QWidget(canvas)
        self.column.setObjectName("TranscriptColumn")
        self.column.setMaximumWidth(COLUMN_WIDTH)
        self.column_layout = QVBoxLayout(self.column)
        self.column_layout.setContentsMargins(0, 0, 0, 0)
        self.column_layout.setSpacing(10)
        self.column_layout.setSizeConstraint(QVBoxLayout.SizeConstraint.SetMinimumSize)
        self.column_layout.addStretch(1)
        outer.addWidget(self.column, 100)
        outer.addStretch(1)
        self.setWidget(canvas)

        self.messages: list[MessageWidget] = []
        self.dividers: list[SummaryDivider] = []  # where older turns were summarised
        self.notices: dict[str, Notice] = {}  # memory id -> its "Remembered" notice
        self.staged: list[StagedFacts] = []  # the "facts to confirm" notices on show
        self.reply: MessageWidget | None = None
        self.turns_allowed = True  # False: no chat model, or a restore (set_turns_allowed)
        self._reply_text = ""
        self._pending = ""
        self._stick = True
        self.flush_timer = QTimer(self)
        self.flush_timer.setInterval(self.MIN_FLUSH_MS)
        self.flush_timer.timeout.connect(self.flush)
        self.flushes = 0  # how many repaints the current reply took (tests, diagnostics)
        self.hit: SearchHighlight | None = None  # the revealed search hit, while it is shown
        self._anchored = False  # keep the hit in place until the owner scrolls
        self._scrolling = False  # the view itself is moving the scroll bar
        # The opened conversation's messages not built yet (oldest first; built from the end)
        # and where the next older one's widgets go in the column.
        self._unbuilt: list[TranscriptMessage] = []
        self._top = 0  # where the next widget of the message being built above goes
        self._building_above = False
        self._partial: MessageWidget | None = None  # a reply whose parts are still being made
        # How long the event-loop turn after a slice took (its relayout and paint), as a
        # running estimate: the next slice's own budget is what is left of BUILD_SLICE_MS.
        self._settle_ms = 0.0
        self._slice_ended: float | None = None
        # While older messages are built above, a widget built before them: when it moves
        # down, the view moves with it, so what the owner reads stays where it is.
        self._anchor: QWidget | None = None
        self._owed = 0  # px the view still has to move down (the range had not grown yet)
        self._wanted: tuple[str, Sequence[str] | None] | None = None  # (id, terms or focus)
        self._build_timer = QTimer(self)
        self._build_timer.setSingleShot(True)
        self._build_timer.setInterval(0)
        self._build_timer.timeout.connect(self._build_some)
        self.jump_button = QPushButton(JUMP_TEXT, self)
        self.jump_button.setObjectName("JumpToLatest")
        self.jump_button.setToolTip("Scroll to the newest message and follow the reply")
        self.jump_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.jump_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # typing stays in the composer
        self.jump_button.clicked.connect(self.scroll_to_bottom)
        self._style_jump_button()
        shadow = QGraphicsDropShadowEffect(self.jump_button)
        shadow.setBlurRadius(16)
        shadow.setOffset(0, 2)
        shadow.setColor(QColor(0, 0, 0, 90))
        self.jump_button.setGraphicsEffect(shadow)
        self.jump_button.hide()
        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._follow)
        bar.valueChanged.connect(self._remember_position)
        bar.actionTriggered.connect(self._owner_scrolled)

    # -- whole transcript --------------------------------------------------------------

    def clear(self) -> None:
        self._build_timer.stop()
        self._unbuilt = []
        self._partial = None
        self._slice_ended = None
        self._wanted = None
        if self._anchor is not None:
            self._anchor.removeEventFilter(self)
        self._anchor = None
        self._owed = 0
        self.flush_timer.stop()
        self.reply = None
        self._pending = ""
        self._reply_text = ""
        while self.column_layout.count() > 1:
            item = self.column_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.hide()  # at once: deletion waits for the event loop
                widget.deleteLater()
        self.messages.clear()
        self.dividers.clear()
        self.notices.clear()
        self.staged.clear()
        self.hit = None
        self._anchored = False
        self._stick = True
        self._update_jump_button()

    def show_messages(
        self,
        messages: Sequence[TranscriptMessage],
        *,
        hit: str | None = None,
        terms: Sequence[str] = (),
        focus: str | None = None,
    ) -> None:
        """Show a conversation: its newest messages now, older ones a slice per event-loop
        turn (`building` until done, then `built`). With `hit`, the view goes to that message
        with `terms` marked once it is built; with `focus`, it is scrolled into view; without
        either, the view stays at the end."""
        self.clear()
        self._unbuilt = list(messages)
        ids = {message.id for message in messages}
        if hit is not None and hit in ids:
            self._wanted = (hit, terms)
        elif focus is not None and focus in ids:
            self._wanted = (focus, None)
        self._build_some()

    @property
    def building(self) -> bool:
        """Older messages of the opened conversation are still being built."""
        return bool(self._unbuilt) or self._partial is not None

    def _build_some(self) -> None:
        """Build older messages, newest first, for one slice of time (at least one), then
        yield to the event loop."""
        started = time.perf_counter()
        first = not self.messages and not self.dividers
        # What this slice builds goes above what the owner reads: the view moves with it.
        top = self._widget_at_view_top()
        if top is not None and top is not self._anchor:
            if self._anchor is not None:
                self._anchor.removeEventFilter(self)
            self._anchor = top
            top.installEventFilter(self)
        if self._slice_ended is not None:  # the last slice's relayout and paint since
            settled = (started - self._slice_ended) * 1000
            self._settle_ms = min(0.5 * self._settle_ms + 0.5 * settled, BUILD_SLICE_MS)
        budget = BUILD_SLICE_MS - self._settle_ms
        while self._unbuilt or self._partial is not None:
            partial = self._partial
            if partial is not None:
                if partial not in self.messages or not partial.build_next_part():
                    self._partial = None
            else:
                self._build_above(self._unbuilt.pop())
            # The first slice reaches the newest reply at least (its recall is the one the
            # memory pane shows, named by the reply's time).
            wanting_reply = first and self.last_assistant() is None
            if (time.perf_counter() - started) * 1000 >= budget and not wanting_reply:
                break
        if first:
            self._refresh_regenerable()
        self._reveal_wanted()
        if self.building:
            self._slice_ended = time.perf_counter()
            self._build_timer.start()
        else:
            self._slice_ended = None
            self.built.emit()

    def _widget_at_view_top(self) -> QWidget | None:
        """The first of the transcript's widgets that starts inside the view (or, when
        none does, the one the view is inside): what the owner reads."""
        top = self.verticalScrollBar().value() - self.column.y()
        layout = self.column_layout
        inside: QWidget | None = None
        for position in range(layout.count()):
            item = layout.itemAt(position)
            widget = item.widget() if item is not None else None
            if widget is None:
                continue
            if widget.y() >= top:
                return widget
            inside = widget
        return inside

    def _build_above(self, message: TranscriptMessage) -> None:
        """The widgets of one message (and its notices), above everything built so far."""
        self._top = 0
        self._building_above = True
        try:
            if message.role == "summary":
                self._insert(self._divider(message))
                return
            widget = self._add_message(
                message.role,
                message.content,
                message.created_at,
                message_id=message.id,
                recall=message.recall,
                in_parts=True,
            )
            if widget.unfinished:
                self._partial = widget
            widget.set_versions(message.versions, message.version)
            widget.set_usage(
                message.model,
                message.input_tokens,
                message.output_tokens,
                message.tokens_per_second,
            )
            if message.error:
                widget.set_note(message.error, error=True)
            elif message.stopped:
                widget.set_note("This reply was cut short.")
            self._set_idle(widget, self.reply is None)
            if widget.role == "assistant":
                widget.set_regenerable(False)  # only the newest may be, set by the caller
            for memory in message.remembered:
                self._add_notice_for(memory, undoable=False)
                if memory.status is MemoryStatus.REJECTED:
                    self.mark_memory_rejected(memory.id)
        finally:
            self._building_above = False

    def _reveal_wanted(self) -> None:
        """The search hit or the version asked for, as soon as its message is built."""
        wanted = self._wanted
        if wanted is None:
            return
        message_id, terms = wanted
        widget = next((w for w in self.messages if w.message_id == message_id), None)
        if widget is None:
            return
        self._wanted = None
        if terms is not None:
            self.reveal(message_id, terms)
        else:
            self._finish(widget)
            QTimer.singleShot(0, self, lambda: self.show_widget(widget))

    def _finish(self, widget: MessageWidget) -> None:
        """Make the parts of `widget` still waiting now (it is wanted whole at once)."""
        widget.finish()
        if widget is self._partial:
            self._partial = None

    # -- compaction --------------------------------------------------------------------

    def _divider(self, summary: TranscriptMessage) -> SummaryDivider:
        divider = SummaryDivider(
            summary.content, summary.compacted, message_id=summary.id, parent=self.column
        )
        if self._building_above:
            self.dividers.insert(0, divider)
        else:
            self.dividers.append(divider)
        return divider

    def insert_summary(self, summary: TranscriptMessage, after_id: str | None) -> SummaryDivider:
        """Show where older turns were summarised: after the message `after_id` (and the
        notices that belong to it), or before the reply being written when it is not shown."""
        layout = self.column_layout
        anchor = next((w for w in self.messages if after_id and w.message_id == after_id), None)
        if anchor is not None:
            position = layout.indexOf(anchor) + 1
            while position < layout.count() - 1:
                item = layout.itemAt(position)
                widget = item.widget() if item is not None else None
                if isinstance(widget, MessageWidget | SummaryDivider) or widget is None:
                    break
                position += 1
        else:
            # The summary covers everything before the question being answered.
            reply = self.reply
            at = self.messages.index(reply) if reply in self.messages else -1
            position = layout.indexOf(self.messages[at - 1]) if at > 0 else layout.count() - 1
        divider = self._divider(summary)
        layout.insertWidget(max(position, 0), divider)
        return divider

    @property
    def streaming(self) -> bool:
        return self.reply is not None

    def is_empty(self) -> bool:
        return not self.messages and not self._unbuilt

    # -- building ----------------------------------------------------------------------

    def _insert(self, widget: QWidget) -> None:
        """Below everything, or while building upwards, after what this message added."""
        if self._building_above:
            self.column_layout.insertWidget(self._top, widget)
            self._top += 1
        else:
            self.column_layout.insertWidget(self.column_layout.count() - 1, widget)

    def _insert_notice(self, notice: Notice) -> None:
        """Notices belong to the reply above them: indent them to its text."""
        holder = QWidget(self.column)
        row = QHBoxLayout(holder)
        row.setContentsMargins(REPLY_INDENT, 0, 0, 0)
        row.addWidget(notice)
        self._insert(holder)

    def _add_message(
        self,
        role: str,
        content: str,
        created_at: datetime,
        *,
        message_id: str | None = None,
        recall: RecallRecord | None = None,
        in_parts: bool = False,
    ) -> MessageWidget:
        widget = MessageWidget(
            "user" if role == "user" else "assistant",
            content,
            created_at,
            message_id=message_id,
            recall=recall,
            in_parts=in_parts,
            parent=self.column,
        )
        widget.message_copied.connect(self.message_copied)
        widget.code_copied.connect(self.message_copied)
        widget.version_chosen.connect(self.version_requested)
        widget.edit_submitted.connect(self.edit_requested)
        if widget.role == "assistant":
            widget.regenerate_requested.connect(self.regenerate_requested)
            widget.recall_requested.connect(self.recall_requested)
        self._insert(widget)
        if self._building_above:
            self.messages.insert(0, widget)
        else:
            self.messages.append(widget)
        return widget

    def add_user_message(self, text: str, created_at: datetime | None = None) -> MessageWidget:
        self._stick = True
        self._anchored = False  # a new turn: follow it, not an earlier search hit
        widget = self._add_message("user", text, created_at or utc_now())
        self._refresh_regenerable()
        return widget

    # -- the streaming reply -----------------------------------------------------------

    def begin_reply(self, created_at: datetime | None = None) -> MessageWidget:
        if self.reply is not None:
            self.end_reply()
        self._stick = True
        self._anchored = False
        self.reply = self._add_message("assistant", "", created_at or utc_now())
        self.reply.start_streaming()
        self._reply_text = ""
        self._pending = ""
        self.flushes = 0
        self.flush_timer.setInterval(self.MIN_FLUSH_MS)
        self.flush_timer.start()
        self._refresh_regenerable()
        return self.reply

    def append_text(self, text: str) -> None:
        """Queue streamed text; it is painted at the next timer tick."""
        if self.reply is None:
            self.begin_reply()
        self._pending += text

    def show_activity(self, text: str) -> None:
        if self.reply is not None:
            self.reply.show_activity(text)

    def flush(self) -> None:
        if self.reply is None or not (self._pending or self.reply.unfinished):
            return
        started = time.perf_counter()
        self._reply_text += self._pending
        self._pending = ""
        # New prose and code blocks are made for STREAM_PARTS_MS a repaint at most (one at
        # least); the rest at the next (see MarkdownView).
        self.reply.set_content(self._reply_text, budget_ms=STREAM_PARTS_MS)
        self.flushes += 1
        spent_ms = (time.perf_counter() - started) * 1000
        # Keep repainting under a fifth of the GUI thread's time however long the reply gets.
        interval = int(min(self.MAX_FLUSH_MS, max(self.MIN_FLUSH_MS, spent_ms * 5)))
        if interval != self.flush_timer.interval():
            self.flush_timer.setInterval(interval)

    def end_reply(self, note: str | None = None, *, error: bool = False) -> MessageWidget | None:
        """The reply is over: paint what is left, show why it ended if it did not end well."""
        reply = self.reply
        if reply is None:
            return None
        self.flush()
        self.flush_timer.stop()
        self.reply = None
        if reply.unfinished:
            # Parts the last repaints had no time for: made a slice at a time, as an opened
            # conversation's are (or at once when another message is being made so).
            if self._partial is None:
                self._partial = reply
                self._build_timer.start()
            else:
                reply.finish()
        if not self._reply_text and not note:
            note = "No reply arrived."
        reply.finish_streaming(note, error=error)
        self._refresh_regenerable()
        return reply

    def set_reply_recall(self, recall: RecallRecord | None) -> None:
        target = self.reply or self.last_assistant()
        if target is not None:
            target.set_recall(recall)

    def last_assistant(self) -> MessageWidget | None:
        for widget in reversed(self.messages):
            if widget.role == "assistant":
                return widget
        return None

    def remove_last_reply(self) -> None:
        """Take away the last reply and the notices under it (before regenerating it: the
        engine replaces that reply and its tool steps)."""
        last = self.last_assistant()
        if last is None or last is not self.messages[-1]:
            return
        layout = self.column_layout
        position = layout.indexOf(last)
        gone: list[QWidget] = [last]
        for index in range(position + 1, layout.count()):
            item = layout.itemAt(index)
            widget = item.widget() if item is not None else None
            if widget is not None and not isinstance(widget, MessageWidget | SummaryDivider):
                gone.append(widget)
        self._drop_notices(gone)
        self.messages.remove(last)
        for widget in gone:
            layout.removeWidget(widget)
            if widget is self._anchor:
                self._anchor = None
            widget.hide()  # at once: deletion waits for the event loop
            widget.deleteLater()
        self._refresh_regenerable()

    def _refresh_regenerable(self) -> None:
        last = self.last_assistant()
        idle = self.reply is None
        for widget in self.messages:
            self._set_idle(widget, idle)
            if widget.role == "assistant":
                widget.set_regenerable(
                    widget is last and idle and self.turns_allowed and widget is self.messages[-1]
                )

    def set_idle(self, idle: bool) -> None:
        """Edits and version switches wait while a reply is being written or sent."""
        for widget in self.messages:
            self._set_idle(widget, idle and self.reply is None)

    def set_turns_allowed(self, allowed: bool) -> None:
        """Whether a turn may start (no chat model, a restore: it may not). Edit and resend
        and Regenerate start one, so they are offered only when it may; versions still switch."""
        self.turns_allowed = allowed
        self._refresh_regenerable()

    def _set_idle(self, widget: MessageWidget, idle: bool) -> None:
        widget.set_idle(idle)
        widget.set_edit_offered(self.turns_allowed)
        if not self.turns_allowed:
            widget.set_editable(False)

    def remove_from(self, message_id: str) -> None:
        """Take away a message and everything shown after it (an edited message is resent:
        the turns after it belong to the earlier branch now)."""
        first = next((w for w in self.messages if w.message_id == message_id), None)
        if first is None:
            return
        layout = self.column_layout
        position = layout.indexOf(first)
        gone: list[QWidget] = []
        for index in range(position, layout.count()):
            item = layout.itemAt(index)
            widget = item.widget() if item is not None else None
            if widget is not None:
                gone.append(widget)
        self._drop_notices(gone)
        for widget in gone:
            if isinstance(widget, MessageWidget):
                self.messages.remove(widget)
            if isinstance(widget, SummaryDivider):
                self.dividers.remove(widget)
            layout.removeWidget(widget)
            if widget is self._anchor:
                self._anchor = None
            widget.hide()  # at once: deletion waits for the event loop
            widget.deleteLater()
        self._refresh_regenerable()

    def set_reply_usage(
        self,
        model: str | None,
        input_tokens: int | None,
        output_tokens: int | None,
        tokens_per_second: float | None,
    ) -> None:
        target = self.reply or self.last_assistant()
        if target is not None:
            target.set_usage(model, input_tokens, output_tokens, tokens_per_second)

    # -- memory notices ----------------------------------------------------------------

    def _add_notice_for(self, memory: Memory, *, undoable: bool, why: str | None = None) -> Notice:
        staged = memory.status is MemoryStatus.STAGED
        label = "Saved for your review" if staged else "Remembered"
        short = _short(memory.content)
        text = f"<b>{label}:</b> {html.escape(short)}"
        reason = f"<i>({html.escape(why)})</i>" if staged and why else ""
        if text_direction(short) == Qt.LayoutDirection.RightToLeft:
            # An Arabic or Hebrew fact on a line of its own, from the right; the reason after
            # it on one of its own (what follows a block would join it).
            text = f"<b>{label}:</b>{block_html(html.escape(short), short)}"
            reason = block_html(reason, why) if reason and why else ""
        if reason:  # why it was not saved at once ("it came from text you pasted")
            text += f" {reason}"
        action = "Undo" if undoable else None
        notice = Notice(text, icon="memory", action=action, parent=self.column)
        if undoable:
            notice.action_button.setToolTip(UNDO_TIP)
        notice.action_clicked.connect(lambda: self._undo(memory, notice))
        self._insert_notice(notice)
        self.notices[memory.id] = notice
        return notice

    def show_memory_saved(self, memory: Memory, why: str | None = None) -> Notice:
        """A "Remembered: ... [Undo]" notice for a fact the `remember` tool saved, or "Saved
        for your review: ... (why)" for one it staged."""
        return self._add_notice_for(memory, undoable=True, why=why)

    def _undo(self, memory: Memory, notice: Notice) -> None:
        notice.action_button.setEnabled(False)
        self.memory_undo_requested.emit(memory)

    def mark_memory_rejected(self, memory_id: str) -> None:
        """The fact was taken back: it is rejected (kept so it is not proposed again, never
        recalled), which is what the notice now says; it is not deleted."""
        notice = self.notices.get(memory_id)
        if notice is not None:
            text = notice.text_label.text().replace("Remembered:", "Rejected:", 1)
            text = text.replace("Saved for your review:", "Rejected:", 1)
            notice.set_text(f"<s>{text}</s>")
            notice.set_action(None)
            notice.setToolTip(REJECTED_TIP)

    def mark_undo_failed(self, memory_id: str) -> None:
        notice = self.notices.get(memory_id)
        if notice is not None:
            notice.action_button.setEnabled(True)

    def show_server_away(self, refused: str | None = None) -> Notice:
        """This turn ran without memories: the memory server did not answer, or (`refused`:
        its words) turned this computer's login away (the reply and the conversation are
        kept on this machine until it answers or lets it in)."""
        text = (
            SERVER_AWAY_TEXT
            if refused is None
            else SERVER_REFUSED_TEXT.format(why=html.escape(refused, quote=False))
        )
        notice = Notice(text, icon="server", parent=self.column)
        notice.setProperty("away", True)
        self._insert_notice(notice)
        return notice

    def show_facts_staged(self, memory_ids: Sequence[str]) -> Notice:
        """A badge-like notice: extraction proposed facts (`memory_ids`) that wait for the
        owner. It counts down as they are reviewed (`fact_reviewed`)."""
        notice = Notice("", icon="sparkle", action="Review", parent=self.column)
        staged = StagedFacts(notice, len(memory_ids), set(memory_ids))
        notice.set_text(staged.text())
        notice.action_clicked.connect(self.staged_review_requested)
        self.staged.append(staged)
        self._insert_notice(notice)
        return notice

    def fact_reviewed(self, memory_id: str) -> None:
        """A proposed fact left the queue (confirmed, corrected, rejected, forgotten): its
        notice says how many still wait, and once none does, that they were reviewed
        (rather than offering Review of an empty queue)."""
        for staged in self.staged:
            if memory_id in staged.waiting:
                staged.waiting.discard(memory_id)
                staged.notice.set_text(staged.text())
                if not staged.waiting:
                    staged.notice.set_action(None)

    def _drop_notices(self, gone: Sequence[QWidget]) -> None:
        """Forget the notices inside widgets taken out of the transcript."""

        def inside(notice: Notice) -> bool:
            return any(notice is holder or holder.isAncestorOf(notice) for holder in gone)

        for memory_id, notice in list(self.notices.items()):
            if inside(notice):
                del self.notices[memory_id]
        self.staged = [staged for staged in self.staged if not inside(staged.notice)]

    def add_info(self, text: str) -> QLabel:
        label = QLabel(text, self.column)
        label.setProperty("muted", True)
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        label.setWordWrap(True)
        self._insert(label)
        return label

    # -- following the reply -----------------------------------------------------------

    def _remember_position(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self._stick = value >= bar.maximum() - STICK_MARGIN
        self._update_jump_button()

    def _owner_scrolled(self, _action: int) -> None:
        """The owner moved the view (wheel, keys, scroll bar): they lead from now on."""
        if not self._scrolling:
            self._anchored = False

    def _follow(self, _minimum: int, maximum: int) -> None:
        if self._anchored:
            self._scroll_to_hit()
        elif self._stick:
            self._set_position(maximum)
        elif self._owed:
            self._shift(0)
        self._update_jump_button()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # (Qt filters events before __init__ has set the anchor.)
        if watched is getattr(self, "_anchor", None) and event.type() == QEvent.Type.Move:
            assert isinstance(event, QMoveEvent)
            if not self._stick and not self._anchored:
                self._shift(event.pos().y() - event.oldPos().y())
        return super().eventFilter(watched, event)

    def _shift(self, by: int) -> None:
        """Move the view down `by` px with the content (what the range does not allow yet is
        owed until it grows)."""
        bar = self.verticalScrollBar()
        wanted = bar.value() + self._owed + by
        self._set_position(wanted)
        self._owed = wanted - bar.value()

    def _set_position(self, value: int) -> None:
        self._scrolling = True
        try:
            self.verticalScrollBar().setValue(value)
        finally:
            self._scrolling = False

    def show_widget(self, widget: QWidget) -> None:
        """Scroll so `widget` is in view (and stop following the end)."""
        self._stick = False
        self.ensureWidgetVisible(widget, 0, 48)

    def scroll_to_bottom(self) -> None:
        self._anchored = False
        self._stick = True
        self._set_position(self.verticalScrollBar().maximum())
        self._update_jump_button()

    @property
    def following(self) -> bool:
        """New text scrolls the view (the owner is at the bottom, or went back there)."""
        return self._stick and not self._anchored

    def _update_jump_button(self) -> None:
        bar = self.verticalScrollBar()
        below = bar.maximum() - bar.value()
        wanted = bool(self.messages) and not self._stick and below > STICK_MARGIN
        if wanted == self.jump_button.isHidden():  # not isVisible: the view may be hidden
            self.jump_button.setVisible(wanted)
            if wanted:
                self._place_jump_button()
                self.jump_button.raise_()

    def _place_jump_button(self) -> None:
        button = self.jump_button
        button.adjustSize()
        area = self.viewport().geometry()
        button.move(
            area.x() + (area.width() - button.width()) // 2,
            area.bottom() - button.height() - JUMP_MARGIN,
        )

    def _style_jump_button(self) -> None:
        colours = theme.colours()
        self.jump_button.setStyleSheet(
            f"QPushButton#JumpToLatest {{ background: {colours.card.name()};"
            f" color: {colours.text.name()}; border: 1px solid {colours.faint.name()};"
            " border-radius: 14px; padding: 5px 14px; min-height: 18px; font-weight: 600; }"
            f"QPushButton#JumpToLatest:hover {{ background: {colours.card_selected.name()}; }}"
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._place_jump_button()

    # -- a search hit ------------------------------------------------------------------

    def reveal(self, message_id: str, terms: Sequence[str]) -> MessageWidget | None:
        """Show the message `message_id` a search found: its matching words marked, the view
        scrolled to the first of them, the message tinted for a moment. None when the
        message is not in this transcript, or not built yet (then it is revealed once it is)."""
        widget = next((w for w in self.messages if w.message_id == message_id), None)
        if widget is None:
            if any(message.id == message_id for message in self._unbuilt):
                self._wanted = (message_id, terms)  # revealed as soon as it is built
            return None
        self._finish(widget)  # every word of it is there to be marked
        if self.hit is not None:
            self.hit.clear()
        self.hit = SearchHighlight(widget, terms)
        self._anchored = True
        self._stick = False
        self._scroll_to_hit()
        MessageFlash(widget).start()
        return widget

    def _scroll_to_hit(self) -> None:
        hit = self.hit
        if hit is None:
            return
        canvas = self.widget()
        layout = canvas.layout() if canvas is not None else None
        if canvas is None or layout is None:
            return
        layout.activate()
        top = hit.top_in(canvas) - int(self.viewport().height() * HIT_POSITION)
        bar = self.verticalScrollBar()
        self._set_position(max(bar.minimum(), min(top, bar.maximum())))
        self._stick = False
        self._update_jump_button()
