"""A brief tint over a message that fades out: "this is the one you asked for" (a search hit)."""

from __future__ import annotations

from PySide6.QtCore import QEasingCurve, QEvent, QObject, Qt, QVariantAnimation
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QWidget

from app.look import theme

HOLD_MS = 900  # fully tinted, long enough to find it after the scroll
FADE_MS = 1400
PEAK_ALPHA = 0.22


class MessageFlash(QWidget):
    """Covers its parent (tracking its size), lets clicks through, and deletes itself when
    the fade is over."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setObjectName("MessageFlash")
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground, True)
        self.colour = QColor(theme.colours().accent)
        self.strength = 1.0
        self.setGeometry(parent.rect())
        parent.installEventFilter(self)
        self.animation = QVariantAnimation(self)
        self.animation.setStartValue(1.0)
        self.animation.setKeyValueAt(HOLD_MS / (HOLD_MS + FADE_MS), 1.0)
        self.animation.setEndValue(0.0)
        self.animation.setDuration(HOLD_MS + FADE_MS)
        self.animation.setEasingCurve(QEasingCurve.Type.InOutQuad)
        self.animation.valueChanged.connect(self._fade)
        self.animation.finished.connect(self.deleteLater)

    def start(self) -> None:
        self.show()
        self.raise_()
        self.animation.start()

    @property
    def fading(self) -> bool:
        return self.animation.state() == QVariantAnimation.State.Running

    def _fade(self, value: object) -> None:
        self.strength = float(value)  # type: ignore[arg-type]
        self.update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if isinstance(watched, QWidget) and event.type() == QEvent.Type.Resize:
            self.setGeometry(watched.rect())
        return False

    def paintEvent(self, event: QPaintEvent) -> None:
        colour = QColor(self.colour)
        colour.setAlphaF(PEAK_ALPHA * self.strength)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(colour)
        painter.drawRoundedRect(self.rect(), 10, 10)
        painter.end()
