"""Text normalisation shared by the store, recall and the UI: one meaning of word and name."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Collection, Iterable

# Unicode format characters (category Cf) plus the other default-ignorable code points
# (variation selectors, Hangul fillers, tag characters): invisible when rendered, so they
# can hide inside a word or a tag without the owner seeing them.
INVISIBLE_CHARS = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u115f-\u1160"
    "\u17b4-\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164"
    "\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
INVISIBLE_RE = re.compile(f"[{INVISIBLE_CHARS}]")
# Half a UTF-16 pair: what bytes that are not UTF-8 become (surrogateescape); no store can
# hold one.
LONE_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_WORD_RE = re.compile(r"\w+")
_SPACE_RE = re.compile(r"\s+")
_POSSESSIVE_RE = re.compile(r"['\u2019\u02bc]s\b", re.IGNORECASE)

# English stop words: dropped from full-text queries so that "what", "do", "I" do not
# rank every memory. Kept short on purpose: words like "not" or "never" carry meaning.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren as at be because been
    before being below between both but by can could did didn do does doesn doing don down
    during each few for from further had hadn has hasn have haven having he her here hers
    herself him himself his how i if in into is isn it its itself just ll me might more
    most mustn my myself now o of off on once only or other our ours ourselves out over own
    re s same shan she should shouldn so some such t than that the their theirs them
    themselves then there these they this those through to too under until up ve very was
    wasn we were weren what when where which while who whom why will with won would wouldn
    y you your yours yourself yourselves
    """.split()  # noqa: SIM905
)


# Month names and their usual short forms, by number ("sept" too; "may" is its own).
MONTH_NUMBERS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}


def strip_invisible(text: str) -> str:
    """Remove invisible format characters (zero-width, bidi controls, tags, ...)."""
    return INVISIBLE_RE.sub("", text)


def fold(text: str) -> str:
    """NFKC, invisible characters removed, case-folded: the form used for matching."""
    return strip_invisible(unicodedata.normalize("NFKC", text)).casefold()


def words(text: str) -> list[str]:
    """The word terms of a text, in order, folded (NFKC, case-folded, invisibles removed)."""
    return _WORD_RE.findall(fold(text))


_ORDINAL_RE = re.compile(r"^(\d+)(?:st|nd|rd|th)$")
_DOUBLED_RE = re.compile(r"([^aeiouylsz\d])\1$")


def stem(word: str) -> str:
    """A light stem of one folded word, so that two wordings of a fact match: "likes" and
    "liked" ~ "like", "seats" ~ "seat", "parties" ~ "party", "planned" ~ "plan", "3rd" ~ "3".

    Deliberately crude (plural and verb endings, a final e); it only has to make the same
    word in two forms compare equal, never to be a word itself.
    """
    ordinal = _ORDINAL_RE.match(word)
    if ordinal:
        return ordinal.group(1)
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for ending in ("ing", "ed"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            word = word[: -len(ending)]
            if _DOUBLED_RE.search(word):
                word = word[:-1]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def content_words(text: str, *, ignore: Collection[str] = ()) -> set[str]:
    """The stems of the words of `text` that carry meaning: English stop words and the
    words in `ignore` (folded) dropped. How two wordings of a fact are compared."""
    return {stem(w) for w in words(text) if w not in STOP_WORDS and w not in ignore}


def query_terms(text: str) -> list[str]:
    """Distinct word terms of a query with English stop words dropped, in first-seen order."""
    seen: dict[str, None] = {}
    for word in words(text):
        if word not in STOP_WORDS:
            seen.setdefault(word, None)
    return list(seen)


def typed_terms(text: str) -> list[str]:
    """`query_terms` for a search typed key by key: a stop word that ends `text` without a
    space or mark after it is kept, as the word still being typed ("the" on the way to
    "theatre", "a" to "art"); dropped, it left no word to look for and the list went empty
    on the way."""
    terms = query_terms(text)
    folded = fold(text)
    found = _WORD_RE.findall(folded)
    if found and _WORD_RE.match(folded[-1]) and found[-1] in STOP_WORDS:
        terms.append(found[-1])
    return terms


def symbols(text: str) -> list[str]:
    """The symbols of a search that no word index holds, distinct, in first-seen order:
    emoji and the other non-ASCII symbols ("🎂", "€", "✓", "°"; Unicode category S), which
    a word (`words`) and both engines' full-text tokenizers drop as if they were spaces. ASCII
    symbols ("+", "<", "|", "$") are left out: they are what search syntax is made of, and
    stay mere noise in a search. Invisible characters (an emoji's variation selector or
    joiner) are dropped, so "❤️" is "❤" and a family emoji its persons."""
    return list(
        dict.fromkeys(
            char
            for char in strip_invisible(text)
            if not char.isascii() and unicodedata.category(char).startswith("S")
        )
    )


# At most this many of a word's "ss" are also tried as "ß" (2**n spellings of the word).
MAX_SHARP_S = 3


def spellings(term: str, *, typed: bool = False) -> list[str]:
    """A folded `term` and its spellings with "ß" for one or more of its "ss" ("strasse":
    also "straße"), first itself. Case folding turns a typed "ß" into "ss", but the text
    indexes keep "ß" as written: without these neither "Straße" nor "strasse" found a memory
    that says "Straße". A `typed` term (the start of a word) ending in one "s" is also tried
    with "ß" there: "stras" on the way to "strasse" is the start of "straße"."""
    parts = term.split("ss", MAX_SHARP_S)
    found = [parts[0]]
    for part in parts[1:]:
        found = [head + joint + part for head in found for joint in ("ss", "\u00df")]
    if typed and term.endswith("s") and not term.endswith("ss"):
        found.append(term[:-1] + "\u00df")
    return found


def spelled_terms(text: str) -> list[str]:
    """`query_terms`, each that holds "ss" followed by its spellings with "ß" (which case
    folding turned into "ss"): "Fußball" -> "fussball", "fußball"."""
    return list(dict.fromkeys(form for term in query_terms(text) for form in spellings(term)))


def with_spellings(text: str) -> str:
    """`text` with the spellings of its words that hold "ss" or "ß" added at the end ("on
    Schillerstrasse" -> "... schillerstrasse schillerstraße"; "Fußball" also "fussball"): for
    a text index that keeps "ß" as written and is asked in the question's own words (the
    server's)."""
    extra = [form for term in query_terms(text) if "ss" in term for form in spellings(term)]
    return f"{text} {' '.join(extra)}" if extra else text


def fts_query(text: str, *, operator: str = "OR", prefix_last: bool = False) -> str | None:
    """An FTS5 MATCH expression for free text: every term quoted, joined by OR (or AND).

    Quoting every term means nothing a user types (quotes, `*`, `NEAR`, `col:`, `-x`,
    parentheses) can change the query or make it raise. None when no term is left.
    `prefix_last` lets the last term match as a prefix (search as you type). A term with
    "ss" is any of its spellings with "ß": `("strasse" OR "straße")`.
    """
    if operator not in ("OR", "AND"):
        raise ValueError("operator must be OR or AND")
    terms = query_terms(text)
    if not terms:
        return None
    quoted: list[str] = []
    for place, term in enumerate(terms, start=1):
        typed = prefix_last and place == len(terms)
        # \w+ never contains a double quote, so wrapping in quotes is a complete escape.
        # A term is any of its spellings: the index keeps "ß" as written (see `spellings`).
        forms = [f'"{form}"' + ("*" if typed else "") for form in spellings(term, typed=typed)]
        quoted.append(forms[0] if len(forms) == 1 else f"({' OR '.join(forms)})")
    return f" {operator} ".join(quoted)


@functools.lru_cache(maxsize=4_096)
def _is_latin(char: str) -> bool:
    return unicodedata.name(char, "").startswith("LATIN ")


def strip_accents(text: str) -> str:
    """`text` with the accents of its Latin letters removed ("José" -> "Jose", "Dvořák" ->
    "Dvorak"), as the full-text index's tokenizer removes them (unicode61 remove_diacritics
    2): an owner types a name with or without them. Letters that are not an accented form
    ("ø", "ł") and the marks of other scripts (Greek, Cyrillic, Devanagari) are kept: there
    a mark can make another name."""
    if text.isascii():
        return text
    kept: list[str] = []
    latin = False
    for char in unicodedata.normalize("NFD", text):
        if not unicodedata.combining(char):
            latin = _is_latin(char)
        elif latin:
            continue
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


def normalise_name(name: str) -> str:
    """An entity name as stored for telling one apart from another: folded, inner
    whitespace collapsed."""
    return _SPACE_RE.sub(" ", fold(name)).strip()


def name_key(name: str) -> str:
    """The form the entity leg matches a name by: `normalise_name` without the accents of
    Latin letters, so "Jose" finds "José" and "Muller" "Müller" (and the reverse). Case and
    "ß"/"ss" are folded already; nothing else is: still an exact match, never a fuzzy one."""
    return strip_accents(normalise_name(name))


def _word_spans(folded: str) -> list[tuple[int, int, str]]:
    return [(match.start(), match.end(), match.group()) for match in _WORD_RE.finditer(folded)]


def _candidates(
    folded: str, spans: list[tuple[int, int, str]], max_words: int
) -> list[tuple[int, int, str]]:
    found: list[tuple[int, int, str]] = []
    for first in range(len(spans)):
        for count in range(1, max_words + 1):
            last = first + count - 1
            if last >= len(spans):
                break
            run = [word for _, _, word in spans[first : last + 1]]
            if all(word in STOP_WORDS for word in run):
                continue
            joined = " ".join(run)
            found.append((first, count, joined))
            written = name_key(folded[spans[first][0] : spans[last][1]])
            if written != joined:
                found.append((first, count, written))
    return found


def name_candidates(text: str, max_words: int = 6) -> list[tuple[int, int, str]]:
    """Every run of 1 to `max_words` whole words of `text` as an entity name could match it.

    Returns (index of the first word, number of words, matching form: see `name_key`). Each
    run is offered twice where they differ: as written between its first and last word (so
    "O'Brien", "Mary-Jane" and "Dr. Smith" keep their inner punctuation) and as its words
    joined by single spaces. Runs made only of stop words are left out: "us", "it" or "may" in a
    sentence are far more often words than names.
    """
    folded = strip_accents(fold(text))
    return _candidates(folded, _word_spans(folded), max_words)


def pick_names(
    candidates: Iterable[tuple[int, int, str]], known: Collection[str]
) -> list[tuple[int, int, str]]:
    """The candidate runs (see name_candidates) that name one of `known`, as a reader takes
    them: longest first, then leftmost, each word in at most one name ("New York City" wins
    over "York"). In that order."""
    taken: set[int] = set()
    picked: list[tuple[int, int, str]] = []
    for first, count, norm in sorted(candidates, key=lambda c: (-c[1], c[0])):
        covered = set(range(first, first + count))
        if norm in known and not covered & taken:
            taken |= covered
            picked.append((first, count, norm))
    return picked


def _letters(text: str) -> list[tuple[int, int]]:
    """(start, end) of each character of `text` with the combining marks that follow it."""
    found: list[tuple[int, int]] = []
    for index, char in enumerate(text):
        if found and unicodedata.combining(char):
            found[-1] = (found[-1][0], index + 1)
        else:
            found.append((index, index + 1))
    return found


def cut_names(text: str, names: Collection[str], max_words: int = 6) -> str:
    """`text` without the words that name one of `names` (matching forms, see `name_key`, as
    pick_names takes them), nor a possessive "'s" right after one; otherwise as written (NFKC,
    invisible characters removed, case kept), whitespace collapsed.

    "What is Zoë's favourite tea?" without "zoe" is "What is favourite tea?".
    """
    written = strip_invisible(unicodedata.normalize("NFKC", text))
    # Fold one letter (with the marks on it) at a time, as name_candidates folds the whole
    # text, remembering where each folded character came from: "ß" folds to two, "é" (or an
    # "e" with a combining accent) to one.
    folded_parts: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for start, end in _letters(written):
        folded_letter = strip_accents(written[start:end].casefold())
        folded_parts.append(folded_letter)
        starts.extend([start] * len(folded_letter))
        ends.extend([end] * len(folded_letter))
    folded = "".join(folded_parts)
    spans = _word_spans(folded)
    cuts: list[tuple[int, int]] = []
    for first, count, _ in pick_names(_candidates(folded, spans, max_words), names):
        start = starts[spans[first][0]]
        end = ends[spans[first + count - 1][1] - 1]
        possessive = _POSSESSIVE_RE.match(written, end)
        cuts.append((start, possessive.end() if possessive else end))
    kept: list[str] = []
    position = 0
    for start, end in sorted(cuts):
        kept.append(written[position:start])
        position = end
    kept.append(written[position:])
    return _SPACE_RE.sub(" ", " ".join(kept)).strip()
