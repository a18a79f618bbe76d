"""The `remember` tool: the model saves a fact the owner explicitly asked it to keep.

The seed's narrow promotion policy: such a fact is stored active at once (source
`remember`), undoable by rejecting it; with "ask before saving" it is staged instead. It is
also staged, with the reason, when the turn's message does not show that the owner asked
for it in their own words: pasted or quoted material, or a fact the owner's words do not
support (`timothy.memory.provenance`). The entities the model files it under are kept only
when the fact or the owner's own words name them. Relative dates left in the fact are made
absolute from the owner's local date.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from timothy.errors import InvalidInputError
from timothy.memory.dates import absolutise, local_date
from timothy.memory.provenance import named_entities, reason_for, split_message
from timothy.providers.base import ToolSpec
from timothy.store.engine import StoreEngine
from timothy.store.forget import FORGOTTEN
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType

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
    # Why the fact waits for the owner's review instead of being saved at once, in words
    # that follow "Saved for your review: "; None when saved at once (or refused).
    staged_because: str | None = None


ASKED_TO_REVIEW = "you asked to review every fact before it is saved"
# Told to the model about entities `provenance.named_entities` left out.
ENTITIES_NOT_NAMED = "neither the fact nor the owner's own words name them"


def _refuse(reason: str) -> RememberOutcome:
    return RememberOutcome(None, False, json.dumps({"saved": False, "error": reason}))


def apply_remember(
    store: StoreEngine,
    arguments: str,
    *,
    session_id: str | None,
    ask_before_saving: bool,
    now: datetime,
    owner_message: str | None = None,
    tz: tzinfo | None = None,
) -> RememberOutcome:
    """StoreEngine what a `remember` call asks for; bad arguments become an error the model sees.

    `owner_message` is the turn's message from the owner: the fact is saved at once only
    when it shows the owner asked for it in their own words (`provenance.staging_reason`).
    Without one (no turn to judge by) the fact is staged. Entities that neither the fact nor
    the owner's own words name are left out, and the model is told which
    (`provenance.named_entities`): the fact stays as it was judged."""
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
    if not isinstance(kind, str) or kind not in {t.value for t in MemoryType}:
        kind = MemoryType.SEMANTIC.value  # a list or an object is no type either
    content = absolutise(content, local_date(now, tz))
    found = None if owner_message is None else split_message(owner_message)
    entities, dropped = named_entities(entities, content, "" if found is None else found.own_words)
    if ask_before_saving:
        reason: str | None = ASKED_TO_REVIEW
    elif found is None:
        reason = "there was no message of yours to check it against"
    else:
        reason = reason_for(content, found)
    same = _same_fact(store, content)
    if same is not None and (same.status is MemoryStatus.ACTIVE or reason is not None):
        # Stored already (a model may call the tool fifty times for one fact): no second
        # copy to be recalled beside it, and no undo that would reject the first one.
        status = "saved" if same.status is MemoryStatus.ACTIVE else "staged for the owner"
        already = {"saved": True, "id": same.id, "content": same.content}
        already["status"] = f"already {status}"
        return RememberOutcome(None, False, json.dumps(already, ensure_ascii=False))
    try:
        if reason is not None:
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
    result: dict[str, Any] = {"saved": True, "id": memory.id, "content": memory.content}
    if reason is None:
        result["status"] = "saved"
    else:
        result["status"] = "staged for the owner to confirm"
        result["why"] = reason
    if dropped:
        result["entities_not_kept"] = dropped
        result["entities_why"] = ENTITIES_NOT_NAMED
    return RememberOutcome(
        memory, reason is not None, json.dumps(result, ensure_ascii=False), reason
    )


def _same_fact(store: StoreEngine, content: str) -> Memory | None:
    """An active or staged memory with this very text (case and spacing aside)."""
    wanted = " ".join(content.split()).casefold()
    statuses = (MemoryStatus.ACTIVE, MemoryStatus.STAGED)
    for memory in store.memories.list(status=statuses, text=content, limit=25):
        if " ".join(memory.content.split()).casefold() == wanted:
            return memory
    return None


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
