"""Colours and the style sheet, derived from the system palette so dark mode follows the system.

Nothing here hard-codes a light or dark look: every colour is the palette's own or a blend
of two palette colours, recomputed when the palette or the system colour scheme changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QGuiApplication, QPalette
from PySide6.QtWidgets import QAbstractScrollArea, QApplication

MONOSPACE_FAMILIES = [
    "JetBrains Mono",
    "Cascadia Mono",
    "SF Mono",
    "Menlo",
    "Consolas",
    "DejaVu Sans Mono",
    "Liberation Mono",
    "monospace",
]


def monospace_font() -> QFont:
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setFamilies(MONOSPACE_FAMILIES)
    font.setStyleHint(QFont.StyleHint.Monospace)
    # The body's size: a monospace face at a smaller size read as small print beside prose.
    font.setPointSizeF(QGuiApplication.font().pointSizeF())
    return font


def blend(a: QColor, b: QColor, amount: float) -> QColor:
    """`amount` of `a` over `b` (0 gives b, 1 gives a)."""
    return QColor.fromRgbF(
        a.redF() * amount + b.redF() * (1 - amount),
        a.greenF() * amount + b.greenF() * (1 - amount),
        a.blueF() * amount + b.blueF() * (1 - amount),
        1.0,
    )


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


@dataclass(frozen=True, slots=True)
class Colours:
    """The few colours the app paints itself, for the current palette."""

    dark: bool
    window: QColor
    base: QColor
    text: QColor
    muted: QColor  # secondary text: times, counts, hints
    faint: QColor  # hairlines and card borders
    accent: QColor
    accent_text: QColor
    sidebar: QColor
    user_bubble: QColor
    code_background: QColor
    code_header: QColor
    card: QColor
    card_selected: QColor
    danger: QColor
    success: QColor
    warning: QColor
    invisible_marker: QColor
    invisible_marker_background: QColor

    @classmethod
    def of(cls, palette: QPalette) -> Colours:
        dark = is_dark(palette)
        window = palette.color(QPalette.ColorRole.Window)
        base = palette.color(QPalette.ColorRole.Base)
        text = palette.color(QPalette.ColorRole.Text)
        accent = palette.color(QPalette.ColorRole.Highlight)
        return cls(
            dark=dark,
            window=window,
            base=base,
            text=text,
            muted=blend(text, base, 0.58),
            faint=blend(text, base, 0.13 if dark else 0.11),
            accent=accent,
            accent_text=palette.color(QPalette.ColorRole.HighlightedText),
            sidebar=blend(text, window, 0.04) if dark else blend(window, base, 0.75),
            user_bubble=blend(accent, base, 0.22 if dark else 0.12),
            code_background=QColor("#17181b") if dark else QColor("#f6f7f9"),
            code_header=QColor("#23252a") if dark else QColor("#eceef2"),
            card=blend(text, base, 0.045) if dark else base,
            card_selected=blend(accent, base, 0.25 if dark else 0.13),
            danger=QColor("#ff6b6b") if dark else QColor("#c62828"),
            success=QColor("#4cc38a") if dark else QColor("#1b7f4b"),
            warning=QColor("#e6b450") if dark else QColor("#9a6700"),
            invisible_marker=QColor("#ff8a65") if dark else QColor("#d84315"),
            invisible_marker_background=QColor("#4a2a20") if dark else QColor("#fde4da"),
        )


_cached: tuple[int, Colours] | None = None


def colours() -> Colours:
    """The colours of the application's current palette (computed once per palette)."""
    global _cached
    palette = QGuiApplication.palette()
    key = palette.cacheKey()
    if _cached is None or _cached[0] != key:
        _cached = (key, Colours.of(palette))
    return _cached[1]


def dark_palette() -> QPalette:
    """A dark palette for platforms whose style does not supply one (Fusion on bare Linux)."""
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#1f2023",
        QPalette.ColorRole.WindowText: "#e6e6e8",
        QPalette.ColorRole.Base: "#17181b",
        QPalette.ColorRole.AlternateBase: "#222327",
        QPalette.ColorRole.ToolTipBase: "#2b2d31",
        QPalette.ColorRole.ToolTipText: "#e6e6e8",
        QPalette.ColorRole.PlaceholderText: "#8b8d93",
        QPalette.ColorRole.Text: "#e6e6e8",
        QPalette.ColorRole.Button: "#2a2c30",
        QPalette.ColorRole.ButtonText: "#e6e6e8",
        QPalette.ColorRole.BrightText: "#ffffff",
        QPalette.ColorRole.Highlight: "#3d7bfd",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: "#7aa7ff",
        QPalette.ColorRole.LinkVisited: "#b59cff",
        QPalette.ColorRole.Light: "#3a3c41",
        QPalette.ColorRole.Midlight: "#303236",
        QPalette.ColorRole.Mid: "#26282b",
        QPalette.ColorRole.Dark: "#121315",
        QPalette.ColorRole.Shadow: "#000000",
    }
    for role, value in roles.items():
        palette.setColor(role, QColor(value))
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
        QPalette.ColorRole.WindowText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6d6f75"))
    greyed_when_disabled(palette)
    return palette


def light_palette() -> QPalette:
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#f3f4f6",
        QPalette.ColorRole.WindowText: "#1d1e20",
        QPalette.ColorRole.Base: "#ffffff",
        QPalette.ColorRole.AlternateBase: "#f6f7f9",
        QPalette.ColorRole.Text: "#1d1e20",
        QPalette.ColorRole.PlaceholderText: "#8a8d93",
        QPalette.ColorRole.Button: "#f7f7f8",
        QPalette.ColorRole.ButtonText: "#1d1e20",
        QPalette.ColorRole.Highlight: "#2f6fed",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: "#1f5fd6",
        QPalette.ColorRole.ToolTipBase: "#ffffff",
        QPalette.ColorRole.ToolTipText: "#1d1e20",
        QPalette.ColorRole.Light: "#ffffff",
        QPalette.ColorRole.Midlight: "#eceef1",
        QPalette.ColorRole.Mid: "#d6d9de",
        QPalette.ColorRole.Dark: "#b9bdc4",
        QPalette.ColorRole.Shadow: "#8f949b",
        QPalette.ColorRole.BrightText: "#000000",
        QPalette.ColorRole.LinkVisited: "#6b3fd1",
    }
    for role, value in roles.items():
        palette.setColor(role, QColor(value))
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
        QPalette.ColorRole.WindowText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor("#a3a6ab"))
    greyed_when_disabled(palette)
    return palette


def greyed_when_disabled(palette: QPalette) -> None:
    """A disabled field looks disabled: the window's colour behind it, not the white (or
    black) of a field to type in, and its placeholder no brighter than disabled text. Set
    for every role, a colour is also the disabled one: a server's greyed-out address field
    looked ready for typing, its example address like a value."""
    disabled = QPalette.ColorGroup.Disabled
    window = palette.color(QPalette.ColorRole.Window)
    palette.setColor(disabled, QPalette.ColorRole.Base, window)
    palette.setColor(disabled, QPalette.ColorRole.Button, window)
    palette.setColor(
        disabled,
        QPalette.ColorRole.PlaceholderText,
        palette.color(disabled, QPalette.ColorRole.Text),
    )


def see_through(view: QAbstractScrollArea) -> None:
    """Let the pane behind show through a list or text view.

    Through the palette, not a style sheet: a widget's own `background: transparent` rule
    also reaches its scroll bars, which Fusion then paints black.
    """
    palette = view.palette()
    palette.setColor(QPalette.ColorRole.Base, Qt.GlobalColor.transparent)
    view.setPalette(palette)
    view.viewport().setAutoFillBackground(False)


# A temporary chat's tint: a colour nothing else in the window uses.
TEMPORARY = QColor("#7e57c2")


def style_sheet(c: Colours) -> str:
    """The app-wide style sheet; widgets opt in through object names and dynamic properties."""
    muted = c.muted.name()
    faint = c.faint.name()
    accent = c.accent.name()
    scroll = blend(c.text, c.base, 0.22).name()
    scroll_hover = blend(c.text, c.base, 0.4).name()
    return f"""
    QSplitter::handle {{ background: {faint}; }}
    QSplitter::handle:horizontal {{ width: 1px; }}
    QSplitter::handle:vertical {{ height: 1px; }}

    #Sidebar {{ background: {c.sidebar.name()}; }}
    #Sidebar QListView {{ background: transparent; border: none; }}
    #ChatPanel, #TranscriptColumn, #TranscriptView, #TranscriptView > QWidget > QWidget {{
        background: {c.base.name()};
    }}
    #MemoryPane {{ background: {c.sidebar.name()}; }}
    #ChatPanel[temporary="true"], #ChatPanel[temporary="true"] #TranscriptColumn,
    #ChatPanel[temporary="true"] #TranscriptView,
    #ChatPanel[temporary="true"] #TranscriptView > QWidget > QWidget {{
        background: {blend(TEMPORARY, c.base, 0.10 if c.dark else 0.05).name()};
    }}
    #TemporaryBanner {{ background: {blend(TEMPORARY, c.base, 0.24 if c.dark else 0.14).name()};
                       border-bottom: 1px solid {blend(TEMPORARY, c.base, 0.45).name()}; }}
    QToolButton[flat="true"][temporary="true"]:checked {{
        background: {blend(TEMPORARY, c.base, 0.3).name()};
    }}

    QLineEdit[search="true"] {{
        border: 1px solid {faint}; border-radius: 8px; padding: 6px 10px;
        background: {c.base.name()};
    }}
    QLineEdit[search="true"]:focus {{ border-color: {accent}; }}

    #Composer {{
        border: 1px solid {faint}; border-radius: 14px; background: {c.base.name()};
    }}
    #Composer[focused="true"] {{ border-color: {accent}; }}
    #ComposerHint {{ color: {muted}; }}
    QPlainTextEdit#MessageInput {{ border: none; background: transparent; }}

    QToolButton[flat="true"] {{
        border: none; border-radius: 6px; padding: 3px 6px; color: {muted};
    }}
    QToolButton[flat="true"]:hover {{ background: {faint}; color: {c.text.name()}; }}
    QToolButton[flat="true"]:checked {{ background: {faint}; color: {c.text.name()}; }}
    QPushButton[primary="true"] {{
        background: {accent}; color: {c.accent_text.name()}; border: none;
        border-radius: 8px; padding: 7px 16px; font-weight: 600;
    }}
    QPushButton[primary="true"]:disabled {{ background: {faint}; color: {muted}; }}
    QPushButton[round="true"] {{
        border-radius: 16px; min-width: 32px; max-width: 32px; min-height: 32px; max-height: 32px;
        padding: 0; border: none; background: {accent};
    }}
    QPushButton[round="true"]:disabled {{ background: {faint}; }}
    QPushButton[danger="true"] {{ color: {c.danger.name()}; }}

    #Muted, QLabel[muted="true"] {{ color: {muted}; }}
    QLabel[heading="true"] {{ font-weight: 600; }}

    #UserBubble {{ background: {c.user_bubble.name()}; border-radius: 14px; }}
    #CodeBlock {{ background: {c.code_background.name()}; border: 1px solid {faint};
                  border-radius: 8px; }}
    #CodeHeader {{ background: {c.code_header.name()}; border-top-left-radius: 8px;
                   border-top-right-radius: 8px; }}
    #CodeHeader QLabel {{ color: {muted}; }}
    QPlainTextEdit#CodeBody {{ background: transparent; border: none; }}

    #Notice {{ border: 1px solid {faint}; border-radius: 10px; background: {c.card.name()}; }}

    #Banner[kind="error"] {{ background: {blend(c.danger, c.base, 0.16).name()};
                            border-bottom: 1px solid {blend(c.danger, c.base, 0.4).name()}; }}
    #Banner[kind="warning"] {{ background: {blend(c.warning, c.base, 0.14).name()};
                           border-bottom: 1px solid {blend(c.warning, c.base, 0.4).name()}; }}
    #Banner[kind="info"] {{ background: {blend(c.accent, c.base, 0.12).name()};
                           border-bottom: 1px solid {blend(c.accent, c.base, 0.35).name()}; }}

    QTabWidget#MemoryTabs::pane {{ border: none; border-top: 1px solid {faint}; }}
    QTabBar::tab {{ padding: 6px 10px; border: none; color: {muted}; background: transparent; }}
    QTabBar::tab:selected {{ color: {c.text.name()}; border-bottom: 2px solid {accent}; }}
    QTabBar::tab:hover {{ color: {c.text.name()}; }}

    QScrollBar:vertical {{ background: transparent; width: 10px; margin: 0; }}
    QScrollBar:horizontal {{ background: transparent; height: 10px; margin: 0; }}
    QScrollBar::handle:vertical {{ background: {scroll}; border-radius: 3px; min-height: 32px;
                                  margin: 2px 2px 2px 3px; }}
    QScrollBar::handle:horizontal {{ background: {scroll}; border-radius: 3px; min-width: 32px;
                                    margin: 3px 2px 2px 2px; }}
    QScrollBar::handle:hover {{ background: {scroll_hover}; }}
    QScrollBar::add-line, QScrollBar::sub-line {{ width: 0; height: 0; border: none; }}
    QScrollBar::add-page, QScrollBar::sub-page {{ background: none; }}

    QListWidget#SettingsNav {{ background: transparent; border: none; outline: none; }}
    QListWidget#SettingsNav::item {{ padding: 7px 10px; border-radius: 6px; margin: 1px 0; }}
    QListWidget#SettingsNav::item:selected {{ background: {c.card_selected.name()};
                                             color: {c.text.name()}; }}

    QStatusBar {{ border-top: 1px solid {faint}; }}
    QStatusBar QLabel {{ color: {muted}; padding: 0 6px; }}
    """


def apply(app: QApplication, *, scheme: Qt.ColorScheme | None = None) -> None:
    """Use the platform's palette, or a dark one when the system is dark and the style did not
    follow it (Fusion on a bare Linux desktop); `scheme` forces one (screenshots, tests)."""
    app.setPalette(QPalette())  # back to the platform's own palette
    if scheme is None:
        wanted = QGuiApplication.styleHints().colorScheme()
        if wanted == Qt.ColorScheme.Dark and not is_dark(app.palette()):
            app.setPalette(dark_palette())
    elif scheme == Qt.ColorScheme.Dark:
        app.setPalette(dark_palette())
    else:
        app.setPalette(light_palette())
    app.setStyleSheet(style_sheet(Colours.of(app.palette())))


def follow_system(app: QApplication) -> None:
    """Re-apply the palette whenever the system switches between light and dark."""
    apply(app)
    QGuiApplication.styleHints().colorSchemeChanged.connect(lambda _scheme: apply(app))
