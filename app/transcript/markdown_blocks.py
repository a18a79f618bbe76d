"""A reply split into prose and fenced code blocks, so each code block gets its own copy button.

Works on partial text while a reply streams: an unclosed fence is a code block still
arriving. Prose is left to Qt's Markdown renderer; only top-level fences are split out, and
long prose is cut into parts at paragraphs that start anew (see PROSE_PART_CHARS).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_FENCE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
# Prose longer than this is cut into parts, each rendered on its own: a reply streaming in
# re-renders only its last part. Qt renders Markdown in time linear in its length (200,000
# characters: 0.23 s), and a reply of one long prose part was re-rendered whole at every
# repaint, which held the window for half a minute.
PROSE_PART_CHARS = 4_000
# A line that, after a blank line, begins a paragraph that belongs to nothing before it: not
# indented, not a list item, a quote, a table row or HTML. Cutting there renders the same.
_FRESH_START_RE = re.compile(r"^(?![ \t]|[-*+](?:\s|$)|\d{1,9}[.)](?:\s|$)|[>|<])\S")


@dataclass(frozen=True, slots=True)
class Segment:
    kind: Literal["prose", "code"]
    text: str
    language: str = ""
    closed: bool = True  # False for a code block whose closing fence has not arrived yet


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    if len(line) - len(line.lstrip(" ")) > 3:
        return False
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def split_markdown(text: str) -> list[Segment]:
    """Prose and code segments in order; blank prose between blocks is dropped."""
    segments: list[Segment] = []
    prose: list[str] = []
    prose_chars = 0
    code: list[str] = []
    fence = ""
    indent = 0
    language = ""

    def flush_prose() -> None:
        nonlocal prose_chars
        joined = "".join(prose)
        if joined.strip():
            segments.append(Segment("prose", joined.strip("\n")))
        prose.clear()
        prose_chars = 0

    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if not fence:
            match = _FENCE_RE.match(bare)
            # A backtick fence's info string may not contain backticks (CommonMark).
            if match and not (match.group(2)[0] == "`" and "`" in match.group(3)):
                flush_prose()
                indent = len(match.group(1))
                fence = match.group(2)
                info = match.group(3).strip()
                language = info.split()[0] if info else ""
                continue
            long_part = prose_chars >= PROSE_PART_CHARS and not prose[-1].strip()
            if long_part and _FRESH_START_RE.match(bare):  # it ends at a fresh paragraph
                flush_prose()
            prose.append(line)
            prose_chars += len(line)
        else:
            if _closes(bare, fence):
                segments.append(Segment("code", "".join(code).rstrip("\r\n"), language))
                code.clear()
                fence = ""
                continue
            leading = len(bare) - len(bare.lstrip(" "))
            code.append(line[min(indent, leading) :])
    if fence:
        segments.append(Segment("code", "".join(code).rstrip("\r\n"), language, closed=False))
    else:
        flush_prose()
    return segments
