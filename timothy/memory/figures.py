"""The numbers guard: the figures (numbers, dates, amounts) a fact states, in a comparable form.

Consolidation never merges memories whose figures differ ("my budget is 500" / "my budget is
800") and refuses a merged text that adds or drops one. Near-duplicate vectors cannot tell
these apart, and a wrong merge would silently rewrite what the owner said.

The guard errs on the side of leaving memories alone: anything it cannot match exactly ("five
hundred" / "500", "1.500" / "1500", "March 3" / "3/3") counts as different. What it reads:
- digit runs in any script, with inner separators ("1,500", "3.5", "10:30", "2024-03-05"),
  and a leading minus; grouping commas ("1,500" = "1500") and leading zeros ("05" = "5") do
  not matter, trailing decimals do ("3.10" may be a version, not "3.1");
- English number words and ordinals ("two" = "2", "third" = "3"; "hundred", "dozen", ... as
  themselves; "once", "twice", "half");
- month and weekday names and today / tomorrow / yesterday / tonight;
- currency symbols and names ("$", "dollars", "USD" are one token; so are the others) and
  percent ("%" = "percent").
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

_NUMBER_RE = re.compile(r"(?<![\w.,])([-−])?(\d+(?:[.,:/'-]\d+)*)")
_WORD_RE = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_GROUPED_RE = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_PART_RE = re.compile(r"\d+|\D+")

_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen \
fourteen fifteen sixteen seventeen eighteen nineteen"
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety"
_ORDINALS = "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh \
twelfth thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth"
_SCALES = "hundred thousand million billion trillion dozen half"
_MONTHS = "january february march april may june july august september october november december"
_DAYS = "monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday tonight"

_NUMBER_WORDS: dict[str, str] = {
    **{word: str(value) for value, word in enumerate(_ONES.split())},
    **{word: str(value) for value, word in zip(range(20, 100, 10), _TENS.split(), strict=True)},
    **{word: str(value) for value, word in enumerate(_ORDINALS.split())},
    **{word: word for word in _SCALES.split()},
    "once": "1x",
    "twice": "2x",
    "thrice": "3x",
}
_MONTH_WORDS = {month: month for month in _MONTHS.split()}
_MONTH_ABBREVIATIONS = {month[:3]: month for month in _MONTHS.split() if month != "may"}
_MONTH_ABBREVIATIONS["sept"] = "september"
_DAY_WORDS = {word: word for word in _DAYS.split()}
_CURRENCY_WORDS = {
    "usd": "$",
    "dollar": "$",
    "dollars": "$",
    "bucks": "$",
    "eur": "€",
    "euro": "€",
    "euros": "€",
    "gbp": "£",
    "sterling": "£",
    "jpy": "¥",
    "yen": "¥",
    "inr": "₹",
    "rupee": "₹",
    "rupees": "₹",
    "cent": "¢",
    "cents": "¢",
    "percent": "%",
    "pct": "%",
}


def _plain_digits(text: str) -> str:
    """Digits of any script as ASCII (separators kept)."""
    return "".join(
        str(unicodedata.decimal(char)) if unicodedata.decimal(char, None) is not None else char
        for char in text
    )


def _number_token(sign: str | None, digits: str) -> str:
    text = _plain_digits(digits)
    if _GROUPED_RE.match(text):
        text = text.replace(",", "")
    # Leading zeros never change a whole number or a date part ("05" = "5", "2024-03-05" =
    # "2024-3-5"); after a decimal point they do ("3.01"), and so do trailing ones (kept:
    # "3.10" is not "3.1" when it is a version).
    parts = _PART_RE.findall(text)
    for index, part in enumerate(parts):
        if part.isdigit() and (index == 0 or parts[index - 1] not in (".", ",")):
            parts[index] = str(int(part))
    return ("-" if sign else "") + "".join(parts)


def figures(text: str) -> Counter[str]:
    """The figures a text states, as a multiset of comparable tokens."""
    found: Counter[str] = Counter()
    folded = unicodedata.normalize("NFKC", text)
    for match in _NUMBER_RE.finditer(folded):
        found[_number_token(match.group(1), match.group(2))] += 1
    for char in folded:
        if unicodedata.category(char) == "Sc":
            found[char] += 1
        elif char in "%٪":
            found["%"] += 1
    words = list(_WORD_RE.finditer(folded))
    skip = False
    for index, match in enumerate(words):
        if skip:
            skip = False
            continue
        word = match.group(0)
        lower = word.casefold()
        following = words[index + 1].group(0).casefold() if index + 1 < len(words) else ""
        if lower == "per" and following == "cent":
            found["%"] += 1
            skip = True
        elif lower in _NUMBER_WORDS:
            found[_NUMBER_WORDS[lower]] += 1
        elif lower in _DAY_WORDS:
            found[_DAY_WORDS[lower]] += 1
        elif lower in _CURRENCY_WORDS:
            found[_CURRENCY_WORDS[lower]] += 1
        elif lower in _MONTH_WORDS and (lower != "may" or word[0] == "M"):
            # "may" is a month only when capitalised ("in May"), not the verb ("I may go").
            found[_MONTH_WORDS[lower]] += 1
        elif lower in _MONTH_ABBREVIATIONS and _beside_a_number(folded, match.start(), match.end()):
            # "Jan" is a name unless it sits beside a number ("Jan 5", "5 Jan", "Jan. 2024").
            found[_MONTH_ABBREVIATIONS[lower]] += 1
    return found


def _beside_a_number(text: str, start: int, end: int) -> bool:
    after = text[end : end + 3].lstrip(". ")
    before = text[max(0, start - 2) : start].rstrip()
    return bool(after[:1].isdigit() or before[-1:].isdigit())


def describe(tokens: Counter[str]) -> str:
    """The tokens for a report, e.g. "500, $" (or "none")."""
    items = sorted(tokens.elements())
    return ", ".join(items) if items else "none"


def figures_differ(texts: Iterable[str]) -> list[Counter[str]] | None:
    """None when every text states the same figures; else each text's figures, in order."""
    found = [figures(text) for text in texts]
    if all(item == found[0] for item in found[1:]):
        return None
    return found
