"""A conversation as a Markdown document: its title, when it started, each turn under a
heading saying who spoke and when, the replies' own Markdown (code blocks intact).

It is the transcript the owner reads (`transcript.py`): tool steps are folded away, a fact
the `remember` tool saved shows under its reply, summaries of older turns are left out (the
turns they stand for are all there).
"""

from __future__ import annotations

import os
import re
import tempfile
from datetime import datetime, tzinfo
from pathlib import Path

from timothy.chat.transcript import TranscriptMessage, transcript
from timothy.errors import StoreError
from timothy.store.engine import StoreEngine

UNTITLED = "Untitled conversation"
SPEAKERS = {"user": "You", "assistant": "Timothy"}
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def _when(moment: datetime, tz: tzinfo | None) -> str:
    local = moment.astimezone(tz)
    return f"{local.day} {local:%b %Y, %H:%M}"


def close_fences(text: str) -> str:
    """`text` with a code fence left open (a reply cut short mid-block) closed, so it cannot
    swallow the rest of the document."""
    fence = ""
    for line in text.splitlines():
        match = _FENCE_RE.match(line)
        if not fence:
            if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
                fence = match.group(1)
        elif match and not match.group(2).strip():
            marker = match.group(1)
            if marker[0] == fence[0] and len(marker) >= len(fence):
                fence = ""
    return f"{text.rstrip()}\n{fence}" if fence else text


def _turn(message: TranscriptMessage, tz: tzinfo | None) -> list[str]:
    lines = [f"## {SPEAKERS[message.role]} · {_when(message.created_at, tz)}", ""]
    lines.append(close_fences(message.content.strip("\n")) or "*(no text)*")
    notes: list[str] = []
    if message.error:
        notes.append(f"*This reply failed: {message.error}*")
    elif message.stopped:
        notes.append("*This reply was cut short.*")
    notes += [f"> Remembered: {memory.content}" for memory in message.remembered]
    for note in notes:
        lines += ["", note]
    lines.append("")
    return lines


def conversation_markdown(store: StoreEngine, session_id: str, *, tz: tzinfo | None = None) -> str:
    """The conversation `session_id` as Markdown, times in `tz` (the computer's zone when
    None). Raises NotFoundError for an unknown id."""
    session = store.sessions.get(session_id)
    messages = [m for m in transcript(store, session_id) if m.role in SPEAKERS]
    count = len(messages)
    lines = [
        f"# {session.title.strip() or UNTITLED}",
        "",
        f"*Started {_when(session.created_at, tz)} · {count} message{'s' if count != 1 else ''}"
        " · exported from Timothy*",
        "",
    ]
    for message in messages:
        lines += _turn(message, tz)
    return "\n".join(lines).rstrip("\n") + "\n"


def markdown_file_name(title: str, day: datetime) -> str:
    """A file name for the export: the title's words, safe on every system, and the day."""
    words = re.findall(r"[\w-]+", title)[:8]
    stem = "-".join(words)[:60].strip("-") or "conversation"
    return f"{stem} {day.astimezone():%Y-%m-%d}.md"


def export_markdown(
    store: StoreEngine, session_id: str, path: Path, *, tz: tzinfo | None = None
) -> Path:
    """Write the conversation's Markdown to `path`, beside it first and then renamed, so an
    interrupted export never leaves half a file. Returns the path written."""
    path = path.expanduser()
    text = conversation_markdown(store, session_id, tz=tz)
    try:
        handle, temp_name = tempfile.mkstemp(prefix=".export-", dir=path.parent)
    except OSError as exc:
        raise StoreError(f"Cannot write to {path.parent}: {exc.strerror}.") from exc
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.replace(temp_name, path)
    except OSError as exc:
        Path(temp_name).unlink(missing_ok=True)
        raise StoreError(f"Cannot write {path}: {exc.strerror}.") from exc
    return path
