"""The `remember` tool: the model saves a fact the owner explicitly asked it to keep.

The seed's narrow promotion policy: such a fact is stored active at once (source
`remember`), undoable by rejecting it; with "ask before saving" it is staged instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from timothy.errors import InvalidInputError
from timothy.providers.base import ToolSpec
from timothy.store import Store
from timothy.store.forget import FORGOTTEN
from timothy.store.records import Memory, MemorySource, MemoryType

REMEMBER_TOOL = ToolSpec(
    name="remember",
    description=(
        "Save one fact to the owner's long-term memory. Call this only when the owner "
        "explicitly asks you to remember something. Write the fact in the third person about "
        "the owner, self-contained, with absolute dates."
    ),
    parameters={
        "type": "object",
        "properties": {
            "content": {"type": "string", "description": "The fact, one sentence."},
            "type": {
                "type": "string",
                "enum": [t.value for t in MemoryType],
                "description": (
                    "semantic: a fact; preference: a like or dislike; episodic: an event; "
                    "procedural: how the owner wants something done."
                ),
            },
            "entities": {
                "type": "array",
                "items": {"type": "string"},
                "description": "People, places, organisations or things the fact names.",
            },
        },
        "required": ["content"],
    },
)


@dataclass(frozen=True, slots=True)
class RememberOutcome:
    memory: Memory | None  # None when the call was refused
    staged: bool
    result: str  # the tool result the model receives (JSON text)


def _refuse(reason: str) -> RememberOutcome:
    return RememberOutcome(None, False, json.dumps({"saved": False, "error": reason}))


def apply_remember(
    store: Store,
    arguments: str,
    *,
    session_id: str | None,
    ask_before_saving: bool,
    now: datetime,
) -> RememberOutcome:
    """Store what a `remember` call asks for; bad arguments become an error the model sees."""
    try:
        args: Any = json.loads(arguments or "{}")
    except json.JSONDecodeError:
        return _refuse("the arguments were not valid JSON")
    if not isinstance(args, dict):
        return _refuse("the arguments must be a JSON object")
    content = args.get("content")
    if not isinstance(content, str):
        return _refuse("'content' (a string) is required")
    kind = args.get("type", MemoryType.SEMANTIC.value)
    entities = args.get("entities", [])
    if not isinstance(entities, list) or not all(isinstance(e, str) for e in entities):
        entities = []
    if kind not in {t.value for t in MemoryType}:
        kind = MemoryType.SEMANTIC.value
    try:
        if ask_before_saving:
            memory = store.memories.stage(
                content,
                type=kind,
                entities=entities,
                confidence=1.0,
                source=MemorySource.REMEMBER,
                session_id=session_id,
                now=now,
            )
        else:
            memory = store.memories.add(
                content,
                type=kind,
                entities=entities,
                source=MemorySource.REMEMBER,
                session_id=session_id,
                now=now,
            )
    except InvalidInputError as exc:
        return _refuse(str(exc))
    status = "staged for the owner to confirm" if ask_before_saving else "saved"
    result = {"saved": True, "status": status, "id": memory.id, "content": memory.content}
    return RememberOutcome(memory, ask_before_saving, json.dumps(result, ensure_ascii=False))


def saved_memory_id(result: str) -> str | None:
    """The memory a `remember` result (as `apply_remember` wrote it for the model) says was
    saved, if any: how a past turn's transcript finds what it remembered."""
    try:
        data = json.loads(result)
    except ValueError:
        return None
    if isinstance(data, dict) and data.get("saved") and isinstance(data.get("id"), str):
        return str(data["id"])
    return None


def redact_remember_result(result: str, forgotten: Mapping[str, Memory]) -> str | None:
    """A `remember` result that saved one of the `forgotten` memories, with the fact's text
    replaced by FORGOTTEN (the id stays, naming a memory that no longer exists); None for
    any other tool result."""
    memory_id = saved_memory_id(result)
    if memory_id is None or memory_id not in forgotten:
        return None
    data = json.loads(result)
    data["content"] = FORGOTTEN
    return json.dumps(data, ensure_ascii=False)


def redact_remember_call(name: str, arguments: str) -> str:
    """The arguments of the `remember` call whose memory was forgotten, without the fact:
    its content becomes FORGOTTEN and its entities go (other tools' calls are left alone)."""
    if name != REMEMBER_TOOL.name:
        return arguments
    try:
        args: Any = json.loads(arguments or "{}")
    except ValueError:
        return json.dumps({"content": FORGOTTEN})  # unreadable: nothing of it is kept
    if not isinstance(args, dict):
        return json.dumps({"content": FORGOTTEN})
    args["content"] = FORGOTTEN
    if "entities" in args:
        args["entities"] = []
    return json.dumps(args, ensure_ascii=False)
