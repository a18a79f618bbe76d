"""How a reply's Markdown looks in the real window: block quotes carry a bar, inline code is
the body's size on a tinted background, and code blocks are not smaller than the prose."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontInfo, QTextCursor
from pytestqt.qtbot import QtBot

from app.look import theme
from app.mainwindow.main_window import MainWindow
from app.transcript.prose_view import ProseView, quote_level
from tests.app.conftest import WindowFactory, settle, settle_engine
from tests.fakes.openai_server import OpenAIServer

REPLY = (
    "Use `pathlib` for paths.\n\n"
    "> Simple is better than complex.\n>\n> Flat is better than nested.\n\n"
    "```python\nfrom pathlib import Path\n```\n\n"
    "That is all."
)


def reply_in_window(qtbot: QtBot, window: MainWindow, server: OpenAIServer) -> None:
    server.reply(REPLY)
    server.reply("Paths")  # the title
    server.reply(json.dumps({"facts": []}))  # extraction
    window.chat.composer.set_text("How should I handle paths?")
    qtbot.keyClick(window.chat.composer.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not window.chat.streaming, timeout=10_000)
    settle_engine(qtbot, window)
    settle(qtbot, window.workers, window.network)


def test_quotes_have_a_bar_and_code_is_as_large_as_the_prose(
    qtbot: QtBot, make_window: WindowFactory, openai_server: OpenAIServer
) -> None:
    window = make_window(server=openai_server)
    reply_in_window(qtbot, window, openai_server)
    reply = window.chat.transcript.messages[-1]
    proses = [part for part in reply.markdown.parts if isinstance(part, ProseView)]
    quoted = next(p for p in proses if "Simple is better" in p.toPlainText())
    # The bar: painted where the quote's margin is, in its own colour, whole quote long.
    first_bar, bar = quoted.quote_bars()  # one per quoted paragraph, joined into one
    assert first_bar.bottom() + 1 >= bar.top() and first_bar.x() == bar.x()
    image = quoted.viewport().grab().toImage()
    centre = bar.center()
    expected = theme.blend(theme.colours().text, theme.colours().base, 0.28)
    assert image.pixelColor(centre.x(), centre.y()).name() == expected.name()
    assert image.pixelColor(bar.right() + 6, centre.y()).name() != expected.name()
    block = quoted.document().begin()
    while not block.text().startswith("Simple"):
        block = block.next()
    assert quote_level(block) == 1
    assert block.blockFormat().leftMargin() > bar.right()  # the text starts after the bar
    # Inline code: the body's size, on a background.
    first = proses[0]
    cursor = QTextCursor(first.document())
    text = first.toPlainText()
    cursor.setPosition(text.index("pathlib") + 1)
    inline = cursor.charFormat()
    assert inline.fontFixedPitch()
    assert inline.background().color().name() == theme.colours().code_header.name()
    assert inline.fontPointSize() == first.font().pointSizeF()
    # Fenced code: not smaller than the prose beside it.
    [code] = reply.markdown.code_blocks()
    body_size = QFontInfo(first.font()).pointSizeF()
    assert QFontInfo(code.body.font()).pointSizeF() >= body_size
    assert QFontInfo(code.body.font()).fixedPitch()
