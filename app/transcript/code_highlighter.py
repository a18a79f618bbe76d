"""A light, language-agnostic highlighter for code blocks: keywords, strings, comments, numbers.

Not a parser: a handful of patterns that read well for the languages people paste most.
"""

from __future__ import annotations

import re

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

_KEYWORDS = """
    and as assert async await break case catch class const continue def default defer del
    do elif else enum except export extends false finally fn for from func function go if
    impl import in interface is lambda let loop match mod mut new nil none not null or
    package pass private protected pub public raise return self static struct super switch
    this throw true try type typeof use var void where while with yield True False None
    SELECT FROM WHERE JOIN INSERT UPDATE DELETE CREATE TABLE INTO VALUES AND OR NOT NULL
    ORDER BY GROUP LIMIT AS ON
""".split()  # noqa: SIM905
_KEYWORD_RE = re.compile(r"\b(?:" + "|".join(map(re.escape, _KEYWORDS)) + r")\b")
_NUMBER_RE = re.compile(r"\b(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\b")
_STRING_RE = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\\n]|\\.)*`")
_HASH_COMMENT = {
    "python",
    "py",
    "sh",
    "bash",
    "shell",
    "zsh",
    "ruby",
    "rb",
    "yaml",
    "yml",
    "toml",
    "r",
    "perl",
    "make",
    "makefile",
    "dockerfile",
    "console",
    "ini",
    "conf",
}
_DASH_COMMENT = {"sql", "lua", "haskell", "hs"}


def _format(color: str, *, bold: bool = False, italic: bool = False) -> QTextCharFormat:
    fmt = QTextCharFormat()
    fmt.setForeground(QColor(color))
    if bold:
        fmt.setFontWeight(QFont.Weight.DemiBold)
    fmt.setFontItalic(italic)
    return fmt


class CodeHighlighter(QSyntaxHighlighter):
    def __init__(self, document: QTextDocument, language: str, *, dark: bool) -> None:
        super().__init__(document)
        lang = language.lower()
        if lang in _HASH_COMMENT:
            comment = r"#"
        elif lang in _DASH_COMMENT:
            comment = r"--"
        elif lang:
            comment = r"//"
        else:  # unlabelled: the two most common styles
            comment = r"//|#(?!include|define|if|endif|pragma)"
        self.comment_re = re.compile(comment)
        if dark:
            self.keyword = _format("#c792ea", bold=True)
            self.string = _format("#c3e88d")
            self.number = _format("#f78c6c")
            self.comment = _format("#7f8694", italic=True)
        else:
            self.keyword = _format("#8e24aa", bold=True)
            self.string = _format("#2e7d32")
            self.number = _format("#c2410c")
            self.comment = _format("#7a7f87", italic=True)

    def highlightBlock(self, text: str) -> None:
        for match in _KEYWORD_RE.finditer(text):
            self.setFormat(match.start(), match.end() - match.start(), self.keyword)
        for match in _NUMBER_RE.finditer(text):
            self.setFormat(match.start(), match.end() - match.start(), self.number)
        strings = [(m.start(), m.end()) for m in _STRING_RE.finditer(text)]
        for start, end in strings:
            self.setFormat(start, end - start, self.string)
        for match in self.comment_re.finditer(text):
            if any(start <= match.start() < end for start, end in strings):
                continue  # a '#' or '//' inside a string does not start a comment
            self.setFormat(match.start(), len(text) - match.start(), self.comment)
            break
