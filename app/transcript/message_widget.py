"""One turn in the transcript: the owner's words in a bubble, or Timothy's reply as Markdown."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QResizeEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.look import icons, theme
from app.look.tips import set_tip
from app.transcript.bubble_label import BubbleLabel
from app.transcript.markdown_view import MarkdownView
from app.transcript.message_editor import MessageEditor
from app.transcript.version_switcher import VersionSwitcher
from timothy.store.records import RecallRecord

BUBBLE_MAX_WIDTH = 600


def local_time(moment: datetime) -> str:
    local = moment.astimezone()
    now = datetime.now(local.tzinfo)
    if local.date() == now.date():
        return local.strftime("%H:%M")
    if local.year == now.year:
        return local.strftime("%d %b, %H:%M")
    return local.strftime("%d %b %Y, %H:%M")


def _flat_button(name: str, tip: str, parent: QWidget) -> QToolButton:
    button = QToolButton(parent)
    button.setProperty("flat", True)
    button.setIcon(icons.icon(name, "muted", 16))
    set_tip(button, tip)
    button.setAutoRaise(True)
    return button


def memories_used(count: int) -> str:
    """The reply's recall button: how many memories the turn packed, in words."""
    if count == 0:
        return "No memories used"
    return f"{count} memor{'y' if count == 1 else 'ies'} used"


def usage_text(
    model: str | None,
    input_tokens: int | None,
    output_tokens: int | None,
    tokens_per_second: float | None,
) -> tuple[str, str]:
    """A reply's quiet line ("gpt-4o-mini · 1,204 in · 312 out · 41 tokens/s") and its
    tooltip in whole words; parts the provider did not report are left out."""
    parts: list[str] = []
    words: list[str] = []
    if model:
        parts.append(model)
        words.append(f"Written by {model}.")
    if input_tokens is not None and output_tokens is not None:
        parts.append(f"{input_tokens:,} in · {output_tokens:,} out")
        words.append(
            f"{input_tokens:,} tokens went to the model (prompt, memories and conversation) "
            f"and {output_tokens:,} came back."
        )
    if tokens_per_second is not None:
        parts.append(f"{tokens_per_second:,.0f} tokens/s")
        words.append(f"It wrote {tokens_per_second:,.1f} tokens per second.")
    return " · ".join(parts), " ".join(words)


class MessageWidget(QWidget):
    message_copied = Signal(str)
    code_copied = Signal(str)
    regenerate_requested = Signal()
    recall_requested = Signal(object)  # this turn's recall dict, or None
    edit_submitted = Signal(str, str)  # (this message's id, the new text)
    version_chosen = Signal(str)  # the id of the version of this message to show

    def __init__(
        self,
        role: Literal["user", "assistant"],
        content: str,
        created_at: datetime,
        *,
        message_id: str | None = None,
        recall: RecallRecord | None = None,
        in_parts: bool = False,
        parent: QWidget | None = None,
    ) -> None:
        """`in_parts`: a reply's Markdown is made a part at a time (`build_next_part`)."""
        super().__init__(parent)
        self.role = role
        self.message_id = message_id
        self.recall = recall
        self.content = content
        self.streaming = False
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 6, 0, 6)
        outer.setSpacing(4)
        self.time_label = QLabel(local_time(created_at), self)
        self.time_label.setProperty("muted", True)
        self.switcher = VersionSwitcher("message" if role == "user" else "reply", self)
        self.switcher.version_chosen.connect(self.version_chosen)
        self.editor: MessageEditor | None = None
        if role == "user":
            self._build_user(outer, content)
        else:
            self._build_assistant(outer, content, in_parts=in_parts)

    # -- layout ------------------------------------------------------------------------

    def _build_user(self, outer: QVBoxLayout, content: str) -> None:
        row = QHBoxLayout()
        row.addStretch(1)
        bubble = QWidget(self)
        bubble.setObjectName("UserBubble")
        bubble.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        bubble_layout = QVBoxLayout(bubble)
        bubble_layout.setContentsMargins(14, 9, 14, 9)
        self.text_label = BubbleLabel(content, bubble)
        bubble_layout.addWidget(self.text_label)
        bubble.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Minimum)
        self.bubble = bubble
        row.addWidget(bubble)
        self.bubble_row = row
        outer.addLayout(row)
        actions = QHBoxLayout()
        actions.addStretch(1)
        actions.addWidget(self.switcher)
        actions.addWidget(self.time_label)
        self.edit_button = _flat_button(
            "edit", "Edit and resend (the earlier version is kept)", self
        )
        self.edit_button.clicked.connect(self.start_editing)
        actions.addWidget(self.edit_button)
        self.copy_button = _flat_button("copy", "Copy message", self)
        self.copy_button.clicked.connect(self.copy)
        actions.addWidget(self.copy_button)
        self.actions_row = QWidget(self)
        self.actions_row.setLayout(actions)
        actions.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.actions_row)
        self.outer = outer
        self.set_editable(False)

    def _build_assistant(self, outer: QVBoxLayout, content: str, *, in_parts: bool) -> None:
        header = QHBoxLayout()
        header.setSpacing(8)
        avatar = QLabel(self)
        avatar.setPixmap(icons.logo(24))
        avatar.setFixedSize(24, 24)
        header.addWidget(avatar)
        name = QLabel("Timothy", self)
        name.setProperty("heading", True)
        header.addWidget(name)
        header.addWidget(self.time_label)
        header.addStretch(1)
        outer.addLayout(header)

        body = QVBoxLayout()
        body.setContentsMargins(30, 0, 0, 0)
        body.setSpacing(6)
        self.markdown = MarkdownView(self)
        self.markdown.code_copied.connect(self.code_copied)
        if in_parts:
            self.markdown.set_markdown_in_parts(content)
        else:
            self.markdown.set_markdown(content)
        body.addWidget(self.markdown)
        self.activity_label = QLabel(self)
        self.activity_label.setProperty("muted", True)
        self.activity_label.hide()
        body.addWidget(self.activity_label)
        self.note_label = QLabel(self)
        self.note_label.setWordWrap(True)
        self.note_label.hide()
        body.addWidget(self.note_label)

        actions = QHBoxLayout()
        actions.setSpacing(2)
        self.copy_button = _flat_button("copy", "Copy reply (Markdown)", self)
        self.copy_button.clicked.connect(self.copy)
        actions.addWidget(self.copy_button)
        self.regenerate_button = _flat_button("regenerate", "Regenerate this reply", self)
        self.regenerate_button.clicked.connect(self.regenerate_requested)
        actions.addWidget(self.regenerate_button)
        self.recall_button = _flat_button("eye", "What the model saw: the memories recalled", self)
        self.recall_button.setText("Memories used")
        self.recall_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.recall_button.clicked.connect(lambda: self.recall_requested.emit(self.recall))
        actions.addWidget(self.recall_button)
        actions.addWidget(self.switcher)
        actions.addStretch(1)
        self.actions_row = QWidget(self)
        self.actions_row.setLayout(actions)
        actions.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self.actions_row)
        self.usage_label = QLabel(self)
        self.usage_label.setObjectName("UsageLine")
        self.usage_label.setProperty("muted", True)
        self.usage_label.setWordWrap(True)
        font = self.usage_label.font()
        font.setPointSizeF(font.pointSizeF() * 0.88)
        self.usage_label.setFont(font)
        self.usage_label.hide()
        body.addWidget(self.usage_label)
        outer.addLayout(body)
        self._dots = 0
        self._dots_timer = QTimer(self)
        self._dots_timer.setInterval(400)
        self._dots_timer.timeout.connect(self._tick)
        self.set_regenerable(False)
        self._refresh_recall_button()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self.role == "user":
            # A word-wrapped QLabel guesses a narrow width; give it the width its text needs,
            # up to four fifths of the column.
            cap = min(BUBBLE_MAX_WIDTH, int(self.width() * 0.8)) - 28
            natural = max(
                (
                    self.text_label.fontMetrics().horizontalAdvance(line)
                    for line in self.content.split("\n")
                ),
                default=0,
            )
            self.text_label.setMinimumWidth(max(40, min(natural + 4, cap)))
            self.bubble.setMaximumWidth(cap + 28)

    @property
    def unfinished(self) -> bool:
        """Parts of the reply's Markdown are still to be made (built `in_parts`)."""
        return self.role == "assistant" and self.markdown.unfinished

    def build_next_part(self) -> bool:
        """Make the next waiting part of the reply; whether more still wait."""
        return self.role == "assistant" and self.markdown.build_next_part()

    def finish(self) -> None:
        """Make every part of the reply still waiting."""
        if self.role == "assistant":
            self.markdown.finish()

    # -- streaming ---------------------------------------------------------------------

    def start_streaming(self) -> None:
        self.streaming = True
        self.actions_row.hide()
        self.note_label.hide()
        self.show_activity("Thinking")

    def show_activity(self, text: str) -> None:
        """A transient line under the reply ("Thinking", "Saving to memory")."""
        self._activity = text
        self._dots = 0
        self.activity_label.setText(text + "…")
        self.activity_label.show()
        self._dots_timer.start()

    def _tick(self) -> None:
        self._dots = (self._dots + 1) % 4
        self.activity_label.setText(self._activity + "." * self._dots)

    def set_content(self, text: str, *, budget_ms: float | None = None) -> None:
        """Show `text` (`budget_ms`: see MarkdownView.set_markdown; the reply's parts not
        made within it wait, `unfinished`)."""
        self.content = text
        self.markdown.set_markdown(text, budget_ms=budget_ms)
        if text and self.activity_label.isVisible() and self._activity == "Thinking":
            self._dots_timer.stop()
            self.activity_label.hide()

    def finish_streaming(self, note: str | None = None, *, error: bool = False) -> None:
        """The reply ended; `note` says why when it did not end normally."""
        self.streaming = False
        self._dots_timer.stop()
        self.activity_label.hide()
        self.actions_row.show()
        self.set_note(note, error=error)

    def set_note(self, note: str | None, *, error: bool = False) -> None:
        if not note:
            self.note_label.hide()
            return
        colour = theme.colours().danger if error else theme.colours().muted
        self.note_label.setStyleSheet(f"color: {colour.name()}; font-style: italic;")
        self.note_label.setText(note)
        self.note_label.show()

    def set_recall(self, recall: RecallRecord | None) -> None:
        self.recall = recall
        self._refresh_recall_button()

    def _refresh_recall_button(self) -> None:
        if self.role != "assistant":
            return
        items = len(self.recall.items) if self.recall else 0
        self.recall_button.setText(memories_used(items))

    def set_regenerable(self, allowed: bool) -> None:
        if self.role == "assistant":
            self.regenerate_button.setVisible(allowed)

    # -- versions, editing, usage ------------------------------------------------------

    def set_versions(self, versions: tuple[str, ...], index: int) -> None:
        self.switcher.set_versions(versions, index)

    def set_idle(self, idle: bool) -> None:
        """Whether the transcript is free for edits and version switches (no reply is
        being written)."""
        self.switcher.set_enabled(idle)
        if self.role == "user":
            self.set_editable(idle)

    def set_editable(self, allowed: bool) -> None:
        if self.role == "user":
            self.edit_button.setEnabled(allowed and self.message_id is not None)

    def set_edit_offered(self, offered: bool) -> None:
        """Whether the pencil shows at all (not while no turn may start: no chat model, a
        restore), as Regenerate does not; while a reply is written it only greys out."""
        if self.role == "user":
            self.edit_button.setHidden(not offered)

    def start_editing(self) -> MessageEditor | None:
        """Swap the bubble for a box holding its text; Send emits `edit_submitted`."""
        if self.role != "user" or self.message_id is None or not self.edit_button.isEnabled():
            return None
        if self.editor is not None:
            self.editor.focus()
            return self.editor
        editor = MessageEditor(self.content, self)
        editor.setMaximumWidth(BUBBLE_MAX_WIDTH + 60)
        editor.submitted.connect(self._edited)
        editor.cancelled.connect(self.stop_editing)
        self.bubble.hide()
        self.actions_row.hide()
        self.bubble_row.addWidget(editor, 4)
        self.editor = editor
        editor.focus()
        return editor

    def stop_editing(self) -> None:
        editor = self.editor
        if editor is None:
            return
        self.editor = None
        self.bubble_row.removeWidget(editor)
        editor.hide()
        editor.deleteLater()
        self.bubble.show()
        self.actions_row.show()

    def _edited(self, text: str) -> None:
        message_id = self.message_id
        self.stop_editing()
        if message_id is not None and text.strip() and text != self.content:
            self.edit_submitted.emit(message_id, text)

    def set_usage(
        self,
        model: str | None,
        input_tokens: int | None,
        output_tokens: int | None,
        tokens_per_second: float | None,
    ) -> None:
        """The quiet line under a reply: the model that wrote it, tokens in and out, speed."""
        if self.role != "assistant":
            return
        text, tip = usage_text(model, input_tokens, output_tokens, tokens_per_second)
        self.usage_label.setText(text)
        self.usage_label.setToolTip(tip)
        self.usage_label.setVisible(bool(text))

    # -- actions -----------------------------------------------------------------------

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.content)
        self.copy_button.setIcon(icons.icon("check", "success", 16))
        QTimer.singleShot(1500, self, self._reset_copy_icon)
        self.message_copied.emit(self.content)

    def _reset_copy_icon(self) -> None:
        self.copy_button.setIcon(icons.icon("copy", "muted", 16))
