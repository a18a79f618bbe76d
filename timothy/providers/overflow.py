"""A conversation too long for the model: the vendors' words for it, and the owner's sentence.

Each server says it its own way (OpenAI's `context_length_exceeded`, llama.cpp's "exceeds the
available context size", Bedrock's "Input is too long"); the chat turn compacts the
conversation and tries again once when it sees one, so they share one kind of error.
"""

from __future__ import annotations

import re

# Lower-case words that only a context overflow's error carries.
_OVERFLOW_WORDS = (
    "context_length",
    "context length",
    "context size",
    "context window",
    "exceed_context",
    "input is too long",
    "too many tokens",
    "too many input tokens",
)
# "maximum context length is 8192 tokens", "n_ctx: 4096": the model's limit, when given.
_LIMIT = re.compile(
    r"(?:maximum context length is|context (?:size|window|length)[^0-9]{0,20}|n_ctx\W{0,3})"
    r"\s*(\d[\d,]{2,})"
)


def is_context_overflow(text: str) -> bool:
    """True when a refused request's code or words say the prompt outgrew the context."""
    lowered = text.lower()
    return any(words in lowered for words in _OVERFLOW_WORDS)


def too_long_message(model: str, vendor_words: str) -> str:
    """What the owner reads when the conversation does not fit (the turn has compacted it
    first, when there was an older part to summarise)."""
    found = _LIMIT.search(vendor_words.lower())
    limit = f" (it takes at most {found.group(1)} tokens)" if found else ""
    return (
        f"The conversation is too long for the model '{model}'{limit}. Start a new chat to "
        "go on; this one is kept."
    )
