"""Code blocks are coloured by Pygments: the fence's language picks the lexer (aliases too),
an unlabelled block gets a guess, strings stay strings (no SQL keywords inside Python
strings), and the colours follow the theme."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.look import theme
from app.transcript.code_block import (
    LEX_LATER_CHARS,
    CodeBlock,
    _lexing,
    _LexingLine,
    colour_held_code,
    hold_lexing,
    release_lexing,
)
from app.transcript.code_highlighter import (
    DARK_STYLE,
    LIGHT_STYLE,
    guess_lexer,
    lex_whole,
    lexer_made,
    lexer_named,
)
from app.transcript.transcript_view import TranscriptView

PYTHON = (
    "def names(db):\n"
    '    rows = db.execute("SELECT name FROM people WHERE age > 30")\n'
    "    return [row[0] for row in rows]  # first column\n"
)


def colour_at(block: CodeBlock, line: int, text: str) -> QColor | None:
    """The foreground the highlighter gave to `text` on `line` (None: the default)."""
    document = block.body.document()
    layout_block = document.findBlockByNumber(line)
    column = layout_block.text().index(text)
    for span in layout_block.layout().formats():
        if span.start <= column < span.start + span.length:
            return span.format.foreground().color()
    return None


def style_colour(style: str, token: str) -> QColor:
    from pygments.styles import get_style_by_name
    from pygments.token import string_to_tokentype

    kind = string_to_tokentype(token)
    spec = get_style_by_name(style).style_for_token(kind)
    return QColor(f"#{spec['color']}")


def test_python_is_coloured_by_its_lexer_and_strings_stay_strings(qtbot: QtBot) -> None:
    block = CodeBlock(PYTHON, "python")
    qtbot.addWidget(block)
    assert block.highlighter.lexer_name == "Python"
    assert colour_at(block, 0, "def") == style_colour(LIGHT_STYLE, "Keyword")
    string = colour_at(block, 1, '"SELECT')
    assert string == style_colour(LIGHT_STYLE, "Literal.String.Double")
    assert colour_at(block, 1, "FROM") == string, "SQL words inside a string are the string"
    comment = colour_at(block, 2, "# first")
    assert comment == style_colour(LIGHT_STYLE, "Comment.Single")
    assert colour_at(block, 1, "rows") is None, "plain names keep the text colour"


def test_fence_aliases_pick_the_lexer_and_unknown_labels_stay_plain(qtbot: QtBot) -> None:
    for label, name in (
        ("py", "Python"),
        ("sh", "Bash"),
        ("c++", "C++"),
        ("TS", "TypeScript"),
        ("sql", "SQL"),
        ("klingon", ""),
    ):
        block = CodeBlock("x = 1", label)
        qtbot.addWidget(block)
        assert block.highlighter.lexer_name == name, label
    plain = CodeBlock("SELECT * FROM t", "klingon")
    qtbot.addWidget(plain)
    assert colour_at(plain, 0, "SELECT") is None


def test_an_unlabelled_block_is_guessed_among_common_languages(qtbot: QtBot) -> None:
    shell = guess_lexer('#!/bin/bash\nfor f in *.csv; do sqlite3 p.db ".import $f p"; done')
    assert shell is not None and shell.name == "Bash", "the shebang decides"
    block = CodeBlock("#!/usr/bin/env python3\nimport os\nprint(os.getcwd())", "")
    qtbot.addWidget(block)
    assert block.highlighter.lexer_name == "Python"
    assert block.language_label.text() == "code"
    assert colour_at(block, 1, "import") == style_colour(LIGHT_STYLE, "Keyword.Namespace")
    prose = CodeBlock("just some words, nothing to colour", "")
    qtbot.addWidget(prose)
    assert prose.highlighter.lexer_name == ""


def test_a_streamed_block_ends_coloured_as_a_whole_one(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.begin_reply()
    reply = f"Here:\n\n```python\n{PYTHON}```\n"
    for start in range(0, len(reply), 7):
        view.append_text(reply[start : start + 7])
        view.flush()
    view.end_reply()
    [block] = view.messages[-1].markdown.code_blocks()
    whole = CodeBlock(PYTHON.rstrip("\n"), "python")
    qtbot.addWidget(whole)
    for line, text in ((0, "def"), (1, '"SELECT'), (2, "# first"), (2, "return")):
        assert colour_at(block, line, text) == colour_at(whole, line, text), text


def test_the_dark_theme_has_its_own_colours(qtbot: QtBot, qapp: QApplication) -> None:
    theme.apply(qapp, scheme=Qt.ColorScheme.Dark)
    try:
        block = CodeBlock(PYTHON, "python")
        qtbot.addWidget(block)
        keyword = colour_at(block, 0, "def")
        assert keyword == style_colour(DARK_STYLE, "Keyword")
        assert keyword != style_colour(LIGHT_STYLE, "Keyword")
        # Readable on the dark code background: clearly lighter than it.
        assert keyword is not None
        assert keyword.lightnessF() - theme.colours().code_background.lightnessF() > 0.3
    finally:
        theme.apply(qapp, scheme=Qt.ColorScheme.Light)


def spans_of(block: CodeBlock) -> list[list[tuple[int, int, str]]]:
    document = block.body.document()
    found = []
    for number in range(document.blockCount()):
        layout = document.findBlockByNumber(number).layout()
        found.append(
            sorted(
                (s.start, s.length, s.format.foreground().color().name()) for s in layout.formats()
            )
        )
    return found


def test_a_long_block_streams_in_at_the_cost_of_what_arrived(qtbot: QtBot) -> None:
    unit = (
        "def fastest(trains: list[Train]) -> Train:\n"
        '    """The quickest one.\n\n'
        '    def is not a keyword in here; neither is "return".\n'
        '    """\n'
        "    # a comment with 'quotes'\n"
        "    return min(trains, key=lambda t: t.minutes)\n\n"
    )
    code = unit * 40  # ~8 KB
    streamed = CodeBlock("", "python")
    qtbot.addWidget(streamed)
    for end in range(0, len(code) + 1, 37):
        streamed.set_code(code[:end])
    streamed.set_code(code)
    assert streamed.highlighter.lexed_chars < len(unit) * 2, "only the tail was lexed again"
    whole = CodeBlock(code, "python")
    qtbot.addWidget(whole)
    qtbot.waitUntil(lambda: whole.highlighter.lexed_chars == len(code))  # lexed by a worker
    assert spans_of(streamed) == spans_of(whole)
    assert streamed.body.toPlainText() == code
    for block in (streamed, whole):
        block.resize(300, 200)  # narrower than the longest line: a scroll bar's room
    assert streamed.body.height() == whole.body.height()
    docstring = colour_at(whole, 3, "def is not")
    assert docstring == style_colour(LIGHT_STYLE, "Literal.String.Doc")


def test_a_reply_sized_block_streams_in_at_the_cost_of_what_arrived(qtbot: QtBot) -> None:
    """A block of a few dozen lines (what most replies hold) is not lexed whole at each
    repaint either: that cost 5-15 ms of the window's thread per repaint as it grew."""
    code = "".join(
        f"def step_{n}(x: int) -> int:\n    return x * {n}  # line {n}\n" for n in range(12)
    )
    assert len(code) < LEX_LATER_CHARS
    streamed = CodeBlock("", "python")
    qtbot.addWidget(streamed)
    lexed = []
    for end in range(0, len(code) + 1, 23):
        streamed.set_code(code[:end])
        lexed.append(streamed.highlighter.lexed_chars)
    streamed.set_code(code)
    lexed.append(streamed.highlighter.lexed_chars)
    assert max(lexed[len(lexed) // 2 :]) < 160, "each repaint lexed the last few lines only"
    whole = CodeBlock(code, "python")
    qtbot.addWidget(whole)
    assert whole.highlighter.lexed_chars == len(code)
    assert spans_of(streamed) == spans_of(whole)


def test_a_long_whole_block_is_shown_at_once_and_coloured_by_a_worker(qtbot: QtBot) -> None:
    """A conversation opened with a long block in it: the window does not wait for Pygments
    (it held the start up by a tenth of a second a block); the colours follow."""
    code = (PYTHON * 60).rstrip("\n")
    assert len(code) >= LEX_LATER_CHARS
    block = CodeBlock(code, "python")
    qtbot.addWidget(block)
    assert block.body.toPlainText() == code  # the text is there at once, plain
    assert block.highlighter.lexed_chars == 0, "nothing was lexed on the window's thread"
    assert colour_at(block, 0, "def") is None
    qtbot.waitUntil(lambda: colour_at(block, 0, "def") is not None)
    assert colour_at(block, 0, "def") == style_colour(LIGHT_STYLE, "Keyword")
    last = code.count("\n")
    assert colour_at(block, last, "# first") == style_colour(LIGHT_STYLE, "Comment.Single")
    # the same colours as the block lexed on the spot, piece by piece as a reply streams
    streamed = CodeBlock("", "python")
    qtbot.addWidget(streamed)
    for end in range(0, len(code) + 1, 400):
        streamed.set_code(code[:end])
    streamed.set_code(code)
    assert spans_of(streamed) == spans_of(block)


def test_colours_lexed_for_the_other_theme_are_made_again_in_this_one(qtbot: QtBot) -> None:
    """A worker colours a whole block in the theme it was asked in; the theme switched
    before the colours arrived: the block takes the tokens and colours them anew."""
    code = (PYTHON * 60).rstrip("\n")
    block = CodeBlock(code, "python")
    qtbot.addWidget(block)
    qtbot.waitUntil(lambda: colour_at(block, 0, "def") is not None)
    light = spans_of(block)
    dark = lex_whole(code, lexer_named("python"), False, dark=True)
    assert block.highlighter.apply_lexed(dark)
    assert colour_at(block, 0, "def") == style_colour(LIGHT_STYLE, "Keyword")
    assert spans_of(block) == light
    same = lex_whole(code, lexer_named("python"), False, dark=False)
    assert block.highlighter.apply_lexed(same)
    assert spans_of(block) == light
    assert not block.highlighter.apply_lexed(lex_whole("x = 1", None, False, dark=False))


def test_a_block_changed_before_its_colours_arrive_keeps_the_newer_text(qtbot: QtBot) -> None:
    code = (PYTHON * 60).rstrip("\n")
    block = CodeBlock(code, "python")
    qtbot.addWidget(block)
    block.set_code("x = 1")  # replaced before the worker is done: lexed on the spot
    assert block.body.toPlainText() == "x = 1"
    _lexing.submit(lambda: None).result(timeout=10)  # the worker has lexed and emitted
    QApplication.processEvents()  # ... and its (stale) colours are delivered
    assert block.body.toPlainText() == "x = 1"
    assert block.highlighter.lexed_chars == len("x = 1")


HASKELL = 'main :: IO ()\nmain = putStrLn "hello"  -- greet\n'


def test_a_language_whose_lexer_is_not_made_yet_is_plain_until_a_worker_made_it(
    qtbot: QtBot,
) -> None:
    # Making a lexer compiles its regular expressions (0.1-0.3 s): never on the window's
    # thread. No test before this one makes Haskell's.
    assert not lexer_made("haskell")
    block = CodeBlock(HASKELL, "haskell")
    qtbot.addWidget(block)
    assert block.highlighter.lexer is None  # the window's thread did not make it
    assert block.body.toPlainText() == HASKELL.rstrip("\n") or block.code == HASKELL
    qtbot.waitUntil(lambda: colour_at(block, 1, '"hello"') is not None, timeout=10_000)
    assert block.highlighter.lexer_name == "Haskell"
    assert colour_at(block, 1, '"hello"') == style_colour(LIGHT_STYLE, "Literal.String")
    assert lexer_made("haskell")
    again = CodeBlock(HASKELL, "haskell")  # made now: coloured at once
    qtbot.addWidget(again)
    assert again.highlighter.lexer_name == "Haskell"
    assert colour_at(again, 1, '"hello"') == style_colour(LIGHT_STYLE, "Literal.String")


def test_a_block_streaming_in_before_its_lexer_is_made_is_coloured_once_it_is(
    qtbot: QtBot,
) -> None:
    assert not lexer_made("ocaml")
    code = 'let greet name =\n  print_endline ("hello " ^ name)  (* greet *)\n'
    block = CodeBlock("", "ocaml")
    qtbot.addWidget(block)
    for end in range(8, len(code) + 1, 8):
        block.set_code(code[:end])
    block.set_code(code)
    assert block.highlighter.lexer is None or lexer_made("ocaml")
    qtbot.waitUntil(lambda: colour_at(block, 0, "let") is not None, timeout=10_000)
    assert block.highlighter.lexer_name == "OCaml"
    assert colour_at(block, 0, "let") == style_colour(LIGHT_STYLE, "Keyword")
    assert block.body.toPlainText() == code.rstrip("\n") or block.code == code


def test_blocks_wait_while_the_line_is_held_and_are_coloured_in_order_once_released(
    qtbot: QtBot,
) -> None:
    """The window holds the lexing line while it starts (Pygments' first use shares the GIL
    with its first work): blocks stay plain, then are coloured, the first asked first."""
    code = (PYTHON * 60).rstrip("\n")
    hold_lexing()
    try:
        assert _lexing.held
        first = CodeBlock(code, "python")
        second = CodeBlock(code.replace("names", "people"), "python")
        qtbot.addWidget(first)
        qtbot.addWidget(second)
        done: list[str] = []
        marker = _lexing.submit(done.append, "after both")
        QApplication.processEvents()
        assert not marker.done() and done == []
        assert colour_at(first, 0, "def") is None and colour_at(second, 0, "def") is None
        assert first.highlighter.lexed_chars == 0 == second.highlighter.lexed_chars
    finally:
        release_lexing()
    assert not _lexing.held
    marker.result(timeout=10)  # one worker, in order: both blocks were lexed before it
    assert done == ["after both"]
    qtbot.waitUntil(lambda: colour_at(second, 0, "def") is not None)
    assert colour_at(first, 0, "def") == style_colour(LIGHT_STYLE, "Keyword")
    # Released, later work runs at once; releasing again changes nothing.
    release_lexing()
    assert _lexing.submit(lambda: "now").result(timeout=10) == "now"


def test_colouring_held_code_returns_once_the_waiting_blocks_are_lexed(qtbot: QtBot) -> None:
    """Start-up's line of loads colours the code on show as one load: it returns only once
    the blocks that waited are lexed, so the next load does not run beside it."""
    code = (PYTHON * 60).rstrip("\n")
    hold_lexing()
    block = CodeBlock(code, "python")
    qtbot.addWidget(block)
    assert block.highlighter.lexed_chars == 0
    colour_held_code()  # here on the test's thread, as on a worker
    assert not _lexing.held
    QApplication.processEvents()  # the worker's colours, handed over
    assert colour_at(block, 0, "def") == style_colour(LIGHT_STYLE, "Keyword")


def test_a_hold_nobody_releases_lets_go_by_itself() -> None:
    """A window that never got to release the line (closed by a crash, say) does not leave
    every later code block plain: the hold lets go after its time."""
    line = _LexingLine()
    line.hold(at_most_s=0.05)
    assert line.held
    waited = line.submit(lambda: "lexed")
    assert waited.result(timeout=10) == "lexed"
    assert not line.held
    # A failure in held work reaches its future, as the pool's own would.
    line.hold(at_most_s=60)
    failed = line.submit(lambda: 1 / 0)
    line.release()
    assert isinstance(failed.exception(timeout=10), ZeroDivisionError)
