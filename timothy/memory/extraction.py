"""Extraction: one provider call over the latest exchange proposes facts about the owner.

Proposals are only ever staged; the owner confirms them. The hygiene peers get wrong: the
model sees neither the system prompt nor the memory block (recalled memories must not come
back as new ones), the assistant's words are context and never a source of facts, relative
dates are made absolute from the owner's local date on the day the words were said,
restatements of what is already stored are dropped, a fact the owner rejected is never
proposed again, an entity neither the fact nor the owner's own words name is left out (as
`remember`'s are), and anything malformed is logged and ignored.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from timothy.errors import InvalidInputError, ProviderError
from timothy.memory.dates import absolutise, local_date
from timothy.memory.provenance import named_entities, split_message
from timothy.providers.base import ChatMessage, ChatProvider, SystemBlock
from timothy.store.engine import StoreEngine
from timothy.store.records import (
    MAX_ENTITY_CHARS,
    Memory,
    MemorySource,
    MemoryStatus,
    MemoryType,
)
from timothy.text import LONE_SURROGATE_RE, content_words

log = logging.getLogger(__name__)

MAX_FACTS = 10
MAX_FACT_CHARS = 1_000
MAX_ENTITIES = 20  # names kept per fact; a fact names a few
MIN_CONFIDENCE = 0.5
DEFAULT_CONFIDENCE = 0.7
MAX_EXCHANGE_CHARS = 24_000

EXTRACTION_PROMPT = """\
You read one exchange between the owner and their assistant and propose durable facts \
about the owner for the owner's long-term memory. The owner reviews every proposal.

Rules:
- Only facts the owner states about themselves: their life, people, places and things in \
it, plans, preferences, and how they want things done.
- The assistant's messages are context only. Never turn the assistant's suggestions, \
opinions, questions or statements into facts about the owner.
- Skip small talk, questions, one-off requests and anything that will not matter in a month.
- Each fact is one short self-contained sentence about "the owner" (for example "The owner \
prefers aisle seats on long flights.").
- Today is {today}. Write absolute dates, never relative ones such as "next Friday".
- type is one of: semantic (a fact), preference (a like or dislike), episodic (an event \
that happened or will happen), procedural (how the owner wants something done).
- entities are the names of the people, places, organisations and things the fact names.
- confidence (0 to 1) is how sure you are the owner meant it as a lasting fact.

Answer with JSON only, no prose: {{"facts": [{{"content": "...", "type": "...", \
"entities": ["..."], "confidence": 0.9}}]}}. Answer {{"facts": []}} when nothing qualifies."""


@dataclass(frozen=True, slots=True)
class Proposal:
    content: str
    type: MemoryType
    entities: tuple[str, ...]
    confidence: float


def _json_object(text: str) -> Any:
    """The JSON object in a model's answer, tolerating code fences and prose around it."""
    stripped = re.sub(r"^```(?:json)?\s*|\s*```$", "", text.strip())
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        start, end = stripped.find("{"), stripped.rfind("}")
        if start == -1 or end <= start:
            raise
        return json.loads(stripped[start : end + 1])


def parse_proposals(answer: str) -> list[Proposal]:
    """Proposals from the model's answer; raises ValueError when the answer is malformed."""
    data = _json_object(answer)
    if not isinstance(data, dict) or not isinstance(data.get("facts"), list):
        raise ValueError('the answer is not an object with a "facts" list')
    proposals: list[Proposal] = []
    for item in data["facts"][:MAX_FACTS]:
        if not isinstance(item, dict):
            continue
        content = item.get("content")
        if not isinstance(content, str) or not content.strip():
            continue
        content = " ".join(content.split())[:MAX_FACT_CHARS]
        kind = item.get("type")
        if not isinstance(kind, str):  # a list or an object is no type (and unhashable)
            kind = None
        memory_type = MemoryType(kind) if kind in {t.value for t in MemoryType} else None
        entities = item.get("entities", [])
        if not isinstance(entities, list):
            entities = []
        confidence = item.get("confidence", DEFAULT_CONFIDENCE)
        if not isinstance(confidence, int | float) or isinstance(confidence, bool):
            confidence = DEFAULT_CONFIDENCE
        proposals.append(
            Proposal(
                content=content,
                type=memory_type or MemoryType.SEMANTIC,
                entities=_entity_names(entities),
                confidence=min(1.0, max(0.0, float(confidence))),
            )
        )
    return proposals


def _entity_names(entities: list[Any]) -> tuple[str, ...]:
    """The usable names of a proposal's entities, at most MAX_ENTITIES: one name too long or
    holding broken characters would have the store refuse the whole fact, and a model can
    answer with thousands of them."""
    names: list[str] = []
    for entity in entities:
        if not isinstance(entity, str):
            continue
        name = entity.strip()
        if not name or len(name) > MAX_ENTITY_CHARS or LONE_SURROGATE_RE.search(name):
            continue
        names.append(name)
        if len(names) == MAX_ENTITIES:
            break
    return tuple(names)


# Every fact is about "the owner": the word tells two facts apart no more than "the" does.
_SUBJECT_WORDS = frozenset({"owner"})


def restates(proposal: str, existing: str) -> bool:
    """Whether a proposal adds nothing to an existing memory (same words, or fewer).

    Words are compared as light stems ("likes" ~ "liked"), folded, stop words dropped."""
    new = content_words(proposal, ignore=_SUBJECT_WORDS)
    old = content_words(existing, ignore=_SUBJECT_WORDS)
    if not new:
        return True
    if new <= old:
        return True
    return len(new & old) / len(new | old) >= 0.8


def already_known(store: StoreEngine, proposal: str, also: Sequence[str] = ()) -> bool:
    """Whether an active or staged memory (or one of `also`) already says this."""
    if any(restates(proposal, text) for text in also):
        return True
    candidates = store.memories.list(
        status=(MemoryStatus.ACTIVE, MemoryStatus.STAGED), text=proposal, match_any=True, limit=25
    )
    return any(restates(proposal, memory.content) for memory in candidates)


def rejected_before(store: StoreEngine, proposal: str) -> bool:
    """Whether the owner already rejected this fact: a rejected memory says it, in the same
    words or more (the same test as a restatement). Compaction re-reads older turns, so
    without this a fact the owner said no to would come back with every compaction."""
    candidates = store.memories.list(
        status=MemoryStatus.REJECTED, text=proposal, match_any=True, limit=25
    )
    return any(restates(proposal, memory.content) for memory in candidates)


def format_exchange(messages: Sequence[ChatMessage]) -> str:
    """The exchange as the extractor reads it: who said what, nothing else."""
    lines = []
    for message in messages:
        if message.role == "user":
            lines.append(f"Owner: {message.content}")
        elif message.role == "assistant" and message.content.strip():
            lines.append(f"Assistant: {message.content}")
    text = "\n\n".join(lines)
    return text[-MAX_EXCHANGE_CHARS:]


def owner_words(exchange: Sequence[ChatMessage]) -> str:
    """The owner's own words in `exchange`: their messages without what they pasted or
    quoted (`provenance.split_message`)."""
    return "\n".join(
        split_message(message.content).own_words for message in exchange if message.role == "user"
    )


def extract(
    store: StoreEngine,
    chat: ChatProvider,
    exchange: Sequence[ChatMessage],
    *,
    session_id: str | None,
    now: datetime,
    timeout: float,
    said_at: datetime | None = None,
    tz: tzinfo | None = None,
) -> list[Memory]:
    """Stage the facts the model proposes from `exchange`; never raises for model trouble.

    Relative dates count from the owner's local date (`tz`, default this machine's zone) on
    the day the exchange was said (`said_at`, default `now`): compaction extracts from turns
    that may be days old."""
    transcript = format_exchange(exchange)
    if not transcript.strip():
        return []
    today = local_date(said_at or now, tz)
    system = [SystemBlock(EXTRACTION_PROMPT.format(today=f"{today:%A, %d %B %Y}"))]
    try:
        answer = chat.complete(
            system,
            [ChatMessage("user", f"<exchange>\n{transcript}\n</exchange>")],
            max_tokens=1_000,
            timeout=timeout,
        )
    except ProviderError as exc:
        log.warning("extraction skipped: %s (%s)", exc, exc.kind)
        return []
    try:
        proposals = parse_proposals(answer)
    except (ValueError, TypeError) as exc:
        log.warning("extraction answer ignored: %s", exc)
        return []
    staged: list[Memory] = []
    own_words: str | None = None  # worked out for the first proposal that needs it
    for proposal in proposals:
        if proposal.confidence < MIN_CONFIDENCE:
            continue
        content = absolutise(proposal.content, today)
        entities: Sequence[str] = proposal.entities
        if entities:
            # The owner confirms the fact they read; its entities, by which a question
            # brings it back, sit small beside it and are easily passed over: a name taken
            # from a pasted email ("Harbor Estates" on the owner's rent) must not ride in.
            own_words = owner_words(exchange) if own_words is None else own_words
            entities, dropped = named_entities(entities, content, own_words)
            if dropped:
                log.info("extraction left out %d entities nothing named", len(dropped))
        if already_known(store, content, also=[m.content for m in staged]):
            log.info("extraction dropped a restatement of a stored memory")
            continue
        if rejected_before(store, content):
            log.info("extraction dropped a fact the owner rejected before")
            continue
        try:
            staged.append(
                store.memories.stage(
                    content,
                    type=proposal.type,
                    entities=entities,
                    confidence=proposal.confidence,
                    source=MemorySource.EXTRACTION,
                    session_id=session_id,
                    now=now,
                )
            )
        except InvalidInputError as exc:
            log.warning("extraction proposal refused: %s", exc)
    return staged
