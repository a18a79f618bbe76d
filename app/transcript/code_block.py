"""A fenced code block in a reply: monospace, highlighted, with its language and a Copy button."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFontMetrics, QGuiApplication, QTextCursor
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.look import icons, theme
from app.transcript.code_highlighter import (
    CodeHighlighter,
    Lexed,
    lex_whole,
    lexer_named,
    make_lexers,
)

# A whole block at least this long (a conversation opened, not a reply streaming in) is shown
# plain at once and coloured when a worker has lexed it: Pygments takes 50-100 ms on a few
# hundred lines, which held the window up when a conversation with code was opened.
LEX_LATER_CHARS = 2_000
# The same goes for a block whose language's lexer is not made yet (its regular expressions
# compile in 0.1-0.3 s): plain until the worker has made it, whether whole or streaming in.
# While the window starts, the worker waits (`hold_lexing`) for at most this long.
HOLD_MAX_S = 10.0


class _LexingLine:
    """The one lexing worker, which the window can hold while it starts (`hold_lexing`).

    Pygments' first use imports its lexers and compiles their regular expressions: 0.1-0.3 s
    of pure Python that shares the GIL with the window's thread. At start that fell among the
    window's own first work (the memory lists, the opened conversation) and stretched its
    longest stalls to 65-100 ms, and just after them beside the chat engine's build it
    stretched another to 120 ms. Held, a block is shown plain, and coloured in the line of
    start-up's later loads (`colour_held_code`)."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="timothy-lexing")
        self._lock = threading.Lock()
        self._held: list[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]] | None = None
        self._timer: threading.Timer | None = None

    def submit(self, work: Callable[..., Any], *args: Any) -> Future[Any]:
        with self._lock:
            if self._held is not None:
                future: Future[Any] = Future()
                self._held.append((future, work, args))
                return future
        return self._pool.submit(work, *args)

    @property
    def held(self) -> bool:
        with self._lock:
            return self._held is not None

    def hold(self, at_most_s: float = HOLD_MAX_S) -> None:
        """Keep what is submitted until `release` (or `at_most_s`, whichever comes first)."""
        with self._lock:
            if self._held is not None:
                return
            self._held = []
            self._timer = threading.Timer(at_most_s, self.release)
            self._timer.daemon = True
            self._timer.start()

    def release(self) -> list[Future[Any]]:
        """Run what waited, in the order it came (its futures are returned); later work
        runs at once."""
        with self._lock:
            waiting, self._held = self._held or [], None
            timer, self._timer = self._timer, None
            # Queued under the lock: work submitted meanwhile runs after what waited.
            for future, work, args in waiting:
                if future.set_running_or_notify_cancel():
                    self._pool.submit(_settle, future, work, args)
        if timer is not None:
            timer.cancel()
        return [future for future, _, _ in waiting]


def _settle(future: Future[Any], work: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        future.set_result(work(*args))
    except BaseException as failure:
        future.set_exception(failure)


_lexing = _LexingLine()


def hold_lexing() -> None:
    """Hold code blocks' lexing while the window starts (see _LexingLine)."""
    _lexing.hold()


def release_lexing() -> None:
    """Let code blocks' lexing run again (held blocks are coloured now)."""
    _lexing.release()


def colour_held_code(timeout: float = 30.0) -> None:
    """For a worker: release the lexing line and return once the blocks that waited are
    lexed (a load in start-up's line, so that no other load runs beside it)."""
    wait(_lexing.release(), timeout=timeout)


class CodeBlock(QFrame):
    code_copied = Signal(str)
    _lexed = Signal(object)  # the block lexed and coloured by the worker (a Lexed)
    _lexer_made = Signal()  # the worker made the lexer this block waits for

    def __init__(self, code: str, language: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("CodeBlock")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)

        header = QWidget(self)
        header.setObjectName("CodeHeader")
        header.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        row = QHBoxLayout(header)
        row.setContentsMargins(12, 4, 6, 4)
        self.language_label = QLabel(language or "code", header)
        row.addWidget(self.language_label)
        row.addStretch(1)
        self.copy_button = QToolButton(header)
        self.copy_button.setProperty("flat", True)
        self.copy_button.setText("Copy")
        self.copy_button.setIcon(icons.icon("copy", "muted", 14))
        self.copy_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.copy_button.setToolTip("Copy this code")
        self.copy_button.clicked.connect(self.copy)
        row.addWidget(self.copy_button)
        layout.addWidget(header)

        self.body = QPlainTextEdit(self)
        self.body.setObjectName("CodeBody")
        self.body.setReadOnly(True)
        self.body.setFrameShape(QFrame.Shape.NoFrame)
        self.body.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.body.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.body.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.body.setFont(theme.monospace_font())
        self.body.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.body.document().setDocumentMargin(10)
        self.body.document().setUndoRedoEnabled(False)  # appended text is not an edit to undo
        self.highlighter = CodeHighlighter(
            self.body.document(), language, dark=theme.colours().dark
        )
        layout.addWidget(self.body)
        self.language = language
        self.code = ""
        self._widest: int | None = None
        self._asked_lexer = False
        self._lexed.connect(self._colour_lexed)
        self._lexer_made.connect(self._recolour)
        self.set_code(code)

    def set_code(self, code: str) -> None:
        """Show `code`. Text that only grew (a reply streaming in) is appended, so Qt lays
        out and colours the new lines, not the whole block again."""
        if code == self.code:
            return
        previous, self.code = self.code, code
        widest, self._widest = self._widest, None
        grows = bool(previous) and code.startswith(previous)
        ready = self.highlighter.lexer_ready()
        if not grows and (len(code) >= LEX_LATER_CHARS or not ready):
            self.highlighter.prepare_plain(code)
            self.body.setPlainText(code)
            self._fit()
            self._lex_later(code)
            return
        if not ready and not self._asked_lexer:  # streaming in: plain until it is made
            self._asked_lexer = True
            highlighter = self.highlighter
            _lexing.submit(self._make_lexer, "" if highlighter.guessed else highlighter.language)
        self.highlighter.prepare(code)
        if grows:
            if widest is not None:  # only the lines that grew or arrived can be wider now
                tail = code[previous.rfind("\n") + 1 :].split("\n")
                metrics = QFontMetrics(self.body.font())
                self._widest = max(widest, *(metrics.horizontalAdvance(line) for line in tail))
            cursor = QTextCursor(self.body.document())
            cursor.movePosition(QTextCursor.MoveOperation.End)
            cursor.insertText(code[len(previous) :])
            self.highlighter.recolour_from(self.highlighter.resumed_at)
        else:
            self.body.setPlainText(code)
        self._fit()

    def _lex_later(self, code: str) -> None:
        highlighter = self.highlighter
        _lexing.submit(self._lex, code, highlighter.language, highlighter.guessed, highlighter.dark)

    def _lex(self, code: str, language: str, guess: bool, dark: bool) -> None:
        """On the lexing worker: lex and colour `code` (making its lexer first if need be)
        and hand each line's spans to the window's thread."""
        lexer = None if guess or not language else lexer_named(language)
        lexed = lex_whole(code, lexer, guess, dark)
        with contextlib.suppress(RuntimeError):  # the block was closed meanwhile
            self._lexed.emit(lexed)

    def _make_lexer(self, language: str) -> None:
        """On the lexing worker: make the lexer a block streaming in waits for ("": every
        candidate of a guess)."""
        make_lexers(language)
        with contextlib.suppress(RuntimeError):
            self._lexer_made.emit()

    def _recolour(self) -> None:
        """The lexer is made: colour what the block holds now."""
        self.highlighter.use_made_lexer()
        code = self.code
        if len(code) >= LEX_LATER_CHARS:
            self._lex_later(code)
            return
        self.highlighter.prepare(code)
        self.highlighter.rehighlight()

    def _colour_lexed(self, lexed: Lexed) -> None:
        self.highlighter.apply_lexed(lexed)

    def _fit(self) -> None:
        """Exactly as tall as the code (plus a scrollbar when a line is wider than the block).

        Measured against the block's own width, not the viewport's: the viewport is resized
        after this widget, and reading it here made heights flip back and forth.
        """
        metrics = QFontMetrics(self.body.font())
        lines = self.code.split("\n")
        margin = int(self.body.document().documentMargin())
        height = len(lines) * metrics.lineSpacing() + 2 * margin + 4
        if self._widest is None:
            self._widest = max((metrics.horizontalAdvance(line) for line in lines), default=0)
        if self._widest + 2 * margin + 4 > self.width():
            height += self.body.horizontalScrollBar().sizeHint().height()
        if height != self.body.height() or self.body.minimumHeight() != height:
            self.body.setFixedHeight(height)

    def resizeEvent(self, event: object) -> None:
        super().resizeEvent(event)  # type: ignore[arg-type]
        self._fit()

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.code)
        self.copy_button.setText("Copied")
        self.copy_button.setIcon(icons.icon("check", "success", 14))
        QTimer.singleShot(1500, self, self._reset_copy_label)
        self.code_copied.emit(self.code)

    def _reset_copy_label(self) -> None:
        self.copy_button.setText("Copy")
        self.copy_button.setIcon(icons.icon("copy", "muted", 14))
