"""Places to break a line inside long words, for labels that wrap between words only.

A QLabel breaks a line only where the text allows it: a long hash, key or address with no
space, hyphen or slash ran past the widget's edge, cut off. A zero-width space (BREAK) every
LONGEST characters inside such a run lets it wrap; `unbroken` takes them out again for
anything copied or read back.
"""

from __future__ import annotations

import re

BREAK = "\u200b"  # zero width space: a place to break a line, not shown
# A run of this many characters without a space gets a place to break after each such
# stretch: shorter than the narrowest line the labels that use it have (a bubble, a path).
LONGEST = 24
_LONG_RUN_RE = re.compile(rf"[^\s{BREAK}]{{{LONGEST + 1},}}")


def breakable(text: str) -> str:
    """`text` with a BREAK every LONGEST characters inside each longer run without space."""
    return _LONG_RUN_RE.sub(_break_run, text)


def _break_run(match: re.Match[str]) -> str:
    run = match.group(0)
    return BREAK.join(run[start : start + LONGEST] for start in range(0, len(run), LONGEST))


def unbroken(text: str) -> str:
    """`text` without the places to break `breakable` put in."""
    return text.replace(BREAK, "")
