"""Code blocks coloured by Pygments (500+ languages): the fence's language picks the lexer,
and an unlabelled block gets a guess among the languages people paste most.

Pygments lexes the whole block (its lexers are not resumable line by line), once per new
text (`prepare`), and each line takes its slice of the tokens when Qt highlights it. The
colours come from a Pygments style chosen for the theme; backgrounds are left to the block.

Pygments' lexer machinery (`pygments.lexer`, `.lexers`, `.styles`) is imported when the first
lexer or style is made, on the start-up loads' worker (`warm_up`) or the lexing worker, not
with this module: the window's start does not wait for it. Only its token types (a small
module) come at import.
"""

from __future__ import annotations

import bisect
import logging
import threading
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from pygments.token import Comment, Error, String, Token, _TokenType, is_token_subtype
from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

from timothy.health import Check

if TYPE_CHECKING:
    from pygments.lexer import Lexer

log = logging.getLogger(__name__)

LIGHT_STYLE = "default"
DARK_STYLE = "github-dark"
# Unlabelled blocks: the candidates a guess chooses among (each lexer's own `analyse_text`),
# so a guess imports a handful of lexers rather than all of them.
GUESSABLE = (
    "python",
    "bash",
    "javascript",
    "typescript",
    "json",
    "html",
    "xml",
    "css",
    "c",
    "cpp",
    "java",
    "go",
    "rust",
    "sql",
    "yaml",
    "toml",
    "diff",
    "php",
    "ruby",
)
GUESS_EVERY_LINE_UP_TO = 32  # a streamed block is guessed again as it grows; beyond this
# many lines, only when its line count doubles
MIN_GUESS_SCORE = 0.05
RESUME_FROM_CHARS = 256  # a growing block longer than this is lexed from its last top line
# (lexing a reply's 2 KB block whole at each repaint cost the window's thread 5-15 ms)
RESUME_SEARCH_LINES = 400  # how far back a top-level line is looked for
WARM_UP = ("python", "bash", "javascript", "json", "sql")  # lexers most replies use


# The lexers made so far, by label. Making one compiles its regular expressions: 0.1-0.3 s
# of Python for the first of a language, which the window's thread never waits for (a block
# whose lexer is not made yet is shown plain and coloured once the lexing worker made it).
_lexers: dict[str, Lexer | None] = {}
_making = threading.Lock()


def lexer_made(name: str) -> bool:
    """Whether `lexer_named(name)` answers at once (made before, or no such language)."""
    return name in _lexers


def guessing_ready() -> bool:
    """Whether `guess_lexer` answers at once (every candidate made)."""
    return all(name in _lexers for name in GUESSABLE)


def lexer_named(name: str) -> Lexer | None:
    """The lexer for a fence's language label ("py", "c++", "shell"), or None. Made once."""
    if name in _lexers:
        return _lexers[name]
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    with _making:
        if name not in _lexers:
            try:
                lexer: Lexer | None = get_lexer_by_name(name.lower(), stripnl=False, ensurenl=False)
            except ClassNotFound:
                lexer = None
            _lexers[name] = lexer
        return _lexers[name]


def make_lexers(language: str) -> None:
    """Make the lexer for `language` ("": every candidate of a guess); for a worker."""
    for name in (language,) if language else GUESSABLE:
        lexer_named(name)


def guess_lexer(code: str) -> Lexer | None:
    """The likeliest of the common languages for `code`, or None when nothing says so. A
    shebang line decides alone (Python's analyser claims any text with "import " in it)."""
    if code.startswith("#!"):
        code = code.split("\n", 1)[0]
    best: tuple[float, Lexer] | None = None
    for name in GUESSABLE:
        lexer = lexer_named(name)
        if lexer is None:
            continue
        try:
            score = float(lexer.analyse_text(code))
        except Exception:  # an analyser's own failure is only a missing vote
            continue
        if score >= MIN_GUESS_SCORE and (best is None or score > best[0]):
            best = (score, lexer)
    return best[1] if best is not None else None


@cache
def _formats(dark: bool) -> dict[_TokenType, QTextCharFormat]:
    from pygments.styles import get_style_by_name

    style = get_style_by_name(DARK_STYLE if dark else LIGHT_STYLE)
    formats: dict[_TokenType, QTextCharFormat] = {}
    for token, spec in style:
        fmt = QTextCharFormat()
        if spec["color"]:
            fmt.setForeground(QColor(f"#{spec['color']}"))
        if spec["bold"]:
            fmt.setFontWeight(QFont.Weight.DemiBold)
        if spec["italic"]:
            fmt.setFontItalic(True)
        if spec["underline"]:
            fmt.setFontUnderline(True)
        if fmt.properties():
            formats[token] = fmt
    return formats


def format_for(token: _TokenType, dark: bool) -> QTextCharFormat | None:
    """The format of `token`, or of its nearest parent type the style colours."""
    formats = _formats(dark)
    kind: _TokenType | None = token
    while kind is not None and kind is not Token:
        found = formats.get(kind)
        if found is not None:
            return found
        kind = kind.parent
    return None


def warm_up() -> None:
    """Import and compile the common lexers (the first use of one costs a tenth of a second
    or more): for a worker at start-up, so the first reply's code does not pay for it."""
    for name in WARM_UP:
        lexer = lexer_named(name)
        if lexer is not None:
            for _ in lexer.get_tokens_unprocessed("x = 1\n"):
                pass
    guess_lexer("x = 1\n")
    _formats(False)
    _formats(True)


def check_highlighting() -> Check:
    """Pygments and its lexers are there (a bundle must carry the lexer modules, which
    Pygments imports by name): each common language colours a line of code."""
    import pygments

    try:
        missing = [name for name in (*WARM_UP, *GUESSABLE) if lexer_named(name) is None]
        if missing:
            return Check("code highlighting", False, f"no lexer for {', '.join(missing)}")
        coloured = [
            token
            for token, _value in lexer_named("python").get_tokens("def f(): pass")  # type: ignore[union-attr]
            if format_for(token, False) is not None
        ]
        if not coloured or not _formats(True):
            return Check("code highlighting", False, "the colour styles are missing")
        return Check(
            "code highlighting",
            True,
            f"Pygments {pygments.__version__}, {len(GUESSABLE)} common lexers, "
            f"styles {LIGHT_STYLE} and {DARK_STYLE}",
        )
    except Exception as exc:  # a check reports, it never raises
        return Check("code highlighting", False, f"{type(exc).__name__}: {exc}")


Token3 = tuple[int, _TokenType, str]


def lex(code: str, lexer: Lexer | None, guess: bool) -> tuple[Lexer | None, list[Token3]]:
    """The lexer (guessed when `guess`) and tokens of a whole block, on any thread: Pygments'
    lexers keep no state between calls. A lexer's failure leaves the block plain."""
    if guess and code.strip():
        lexer = guess_lexer(code)
    if lexer is None:
        return None, []
    try:
        return lexer, list(lexer.get_tokens_unprocessed(code))
    except Exception:
        log.exception("the %s lexer failed", lexer.name)
        return None, []


Spans = list[list[tuple[int, int, QTextCharFormat]]]  # per line: (column, length, format)


def line_starts(code: str) -> list[int]:
    """Where each line of `code` starts."""
    starts = [0]
    position = code.find("\n")
    while position >= 0:
        starts.append(position + 1)
        position = code.find("\n", position + 1)
    return starts


def colour_lines(
    code: str,
    base: int,
    first: int,
    tokens: list[Token3],
    starts: list[int],
    spans: Spans,
    heads: list[_TokenType | None],
    dark: bool,
) -> None:
    """Fill `spans` and `heads` (the type of the token opening each line) of the lines from
    `first` on, from the tokens of `code[base:]`; on any thread (the formats are shared,
    never changed)."""
    line = first
    for offset, token, value in tokens:
        if not value:
            continue
        start = base + offset
        end = start + len(value)
        line = bisect.bisect_right(starts, start, lo=line) - 1
        if start == starts[line]:
            heads[line] = token
        fmt = format_for(token, dark)
        if fmt is None:
            continue
        at = line
        while start < end and at < len(starts):
            line_end = starts[at + 1] - 1 if at + 1 < len(starts) else len(code)
            stop = min(end, line_end)
            if stop > start:
                spans[at].append((start - starts[at], stop - start, fmt))
            at += 1
            start = line_end + 1


@dataclass(frozen=True, slots=True)
class Lexed:
    """A whole block lexed and coloured line by line on a worker (`lex_whole`): the window's
    thread only hands the lines their spans (`CodeHighlighter.apply_lexed`)."""

    code: str
    lexer: Lexer | None
    tokens: list[Token3]
    dark: bool
    starts: list[int]
    spans: Spans
    heads: list[_TokenType | None]


def lex_whole(code: str, lexer: Lexer | None, guess: bool, dark: bool) -> Lexed:
    """`lex`, then each line's spans in the colours of the `dark` or light style; on any
    thread. (Colouring a reply's 2 KB block took the window's thread 6-13 ms.)"""
    found, tokens = lex(code, lexer, guess)
    starts = line_starts(code)
    spans: Spans = [[] for _ in starts]
    heads: list[_TokenType | None] = [None] * len(starts)
    if found is not None:
        colour_lines(code, 0, 0, tokens, starts, spans, heads, dark)
    return Lexed(code, found, tokens, dark, starts, spans, heads)


class CodeHighlighter(QSyntaxHighlighter):
    def __init__(self, document: QTextDocument, language: str, *, dark: bool) -> None:
        self.dark = dark
        self.language = language
        # Only a lexer made before is used now; else `lexer_ready` is False and the block
        # stays plain until a worker has made it (`make_lexers`, then `use_made_lexer`).
        self.lexer: Lexer | None = (
            lexer_named(language) if language and lexer_made(language) else None
        )
        self.guessed = not language  # an unlabelled block: its lexer is a guess
        self._guessed_lines = 0
        self._text = ""
        self._heads: list[_TokenType | None] = []  # the type of the token opening each line
        self.lexed_chars = 0  # how much of the block the last `prepare` lexed (diagnostics)
        self.resumed_at = 0  # the first line the last `prepare` lexed
        self._line_starts: list[int] = [0]
        self._spans: list[list[tuple[int, int, QTextCharFormat]]] = []
        super().__init__(document)

    @property
    def lexer_name(self) -> str:
        return self.lexer.name if self.lexer is not None else ""

    def lexer_ready(self) -> bool:
        """Whether colouring this block needs no lexer still to be made."""
        return guessing_ready() if self.guessed else lexer_made(self.language)

    def use_made_lexer(self) -> None:
        """Take the lexer a worker has made since (the next `prepare` lexes it whole)."""
        if not self.guessed:
            self.lexer = lexer_named(self.language)
        self._text = ""
        self._guessed_lines = 0

    def prepare(self, code: str) -> None:
        """Lex `code`, the text the document is about to hold (before it is set, so each
        line finds its tokens when Qt highlights it).

        A block that grows as a reply streams is not lexed whole each time: lexing resumes
        at the last line that began at the top level (its first token at column 0 neither
        string nor comment), so each repaint costs what arrived, not the whole block.
        """
        previous, lexer_before = self._text, self.lexer
        self._text = code
        lines = code.count("\n") + 1
        if self.guessed and code.strip() and self._guess_again(lines) and guessing_ready():
            self._guessed_lines = lines
            self.lexer = guess_lexer(code)
        starts = line_starts(code)
        first = 0
        if (
            self.lexer is not None
            and self.lexer is lexer_before
            and len(previous) >= RESUME_FROM_CHARS
            and code.startswith(previous)
        ):
            first = self._resume_line(previous.count("\n"))
        self.resumed_at = first
        kept = self._spans[:first]
        self._spans = kept + [[] for _ in starts[first:]]
        self._heads = self._heads[:first] + [None] * (len(starts) - first)
        self._line_starts = starts
        if self.lexer is None:
            return
        base = starts[first]
        try:
            tokens = list(self.lexer.get_tokens_unprocessed(code[base:]))
        except Exception:  # a lexer's bug must not take the reply down: show it plain
            log.exception("the %s lexer failed", self.lexer.name)
            return
        self._colour(code, base, first, tokens)

    def prepare_plain(self, code: str) -> None:
        """Hold `code` uncoloured, for `apply_lexed` to colour once a worker has lexed it
        (a whole block opened with a conversation: lexing it here would hold the window)."""
        self._text = code
        starts = line_starts(code)
        self._line_starts = starts
        self._spans = [[] for _ in starts]
        self._heads = [None] * len(starts)
        self.resumed_at = 0
        self.lexed_chars = 0

    def apply_lexed(self, lexed: Lexed) -> bool:
        """Colour the block with what a worker lexed and coloured (`lex_whole`); False (and
        nothing done) when the block has changed since."""
        code = lexed.code
        if code != self._text:
            return False
        lexer = lexed.lexer
        if lexer is not None and (self.guessed or self.lexer is None):
            self.lexer = lexer
            self._guessed_lines = code.count("\n") + 1
        if self.lexer is None:
            return True
        if lexed.dark == self.dark and lexer is self.lexer:
            self._line_starts = lexed.starts
            self._spans = lexed.spans
            self._heads = lexed.heads
            self.lexed_chars = len(code)
        else:  # the theme (or the lexer) changed meanwhile: this thread colours the tokens
            self.prepare_plain(code)
            self._colour(code, 0, 0, lexed.tokens)
        self.rehighlight()
        return True

    def _colour(self, code: str, base: int, first: int, tokens: list[Token3]) -> None:
        """The spans of each line from `first` on, from the tokens of `code[base:]`."""
        self.lexed_chars = len(code) - base
        colour_lines(
            code, base, first, tokens, self._line_starts, self._spans, self._heads, self.dark
        )

    def _resume_line(self, last_complete: int) -> int:
        """The last line before `last_complete` (the last line the old text finished) where
        lexing can start afresh; 0 when there is none in reach."""
        for line in range(min(last_complete, len(self._heads)) - 1, 0, -1):
            head = self._heads[line]
            if head is not None and not any(
                is_token_subtype(head, kind) for kind in (String, Comment, Token.Text, Error)
            ):
                return line
            if last_complete - line > RESUME_SEARCH_LINES:
                break
        return 0

    def recolour_from(self, line: int) -> None:
        """Apply the new colours to the lines from `line` on (text appended to the document
        has Qt recolour only the lines it touched; lexing resumed earlier than those)."""
        document = self.document()
        if document is None:
            return
        block = document.findBlockByNumber(line)
        while block.isValid():
            self.rehighlightBlock(block)
            block = block.next()

    def _guess_again(self, lines: int) -> bool:
        if lines == self._guessed_lines:
            return False
        return lines <= GUESS_EVERY_LINE_UP_TO or lines >= 2 * self._guessed_lines

    def highlightBlock(self, text: str) -> None:
        document = self.document()
        if document is None or document.characterCount() <= 1:
            return  # empty (for a moment, as setPlainText clears it before inserting)
        if document.characterCount() != len(self._text) + 1:
            self.prepare(document.toPlainText())  # changed without `prepare`: lex it now
        number = self.currentBlock().blockNumber()
        if 0 <= number < len(self._spans):
            for start, length, fmt in self._spans[number]:
                self.setFormat(start, length, fmt)
