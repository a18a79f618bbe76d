"""Write resources/english-word-ranks.txt: how common each English word family is.

Source: the WordPiece vocabulary of BERT (uncased) in resources/all-MiniLM-L6-v2-tokenizer.json
(shipped for the local embedder), whose whole-word entries from index 1996 on are in order
of frequency in English books and Wikipedia. Each word is reduced to the form the full-text
index stores it under (porter stemming: "checking" -> "check"), and each form keeps the best
rank of its words. Recall's text floor reads the result (timothy/retrieval/floor.py); doing
this at build time spares the app a large JSON parse and 30,000 stemmings at start-up.

    .venv/bin/python -m tools.english_word_ranks
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from timothy.store.search import index_forms  # noqa: E402

SOURCE = REPO / "resources" / "all-MiniLM-L6-v2-tokenizer.json"
TARGET = REPO / "resources" / "english-word-ranks.txt"
FIRST_WORD_INDEX = 1996  # before it: special tokens and single characters


def ranks() -> dict[str, int]:
    vocabulary = json.loads(SOURCE.read_text(encoding="utf-8"))["model"]["vocab"]
    words = {
        word: index - FIRST_WORD_INDEX if index >= FIRST_WORD_INDEX else -1
        for word, index in vocabulary.items()
        if not word.startswith("##")
    }
    best: dict[str, int] = {}
    for word, form in index_forms(words).items():
        rank = words[word]
        if form not in best or rank < best[form]:
            best[form] = rank
    return best


def main() -> int:
    found = ranks()
    lines = [f"{form}\t{rank}" for form, rank in sorted(found.items(), key=lambda f: (f[1], f[0]))]
    header = (
        "# English word families by commonness: index form, tab, rank (0 = commonest; -1 = a "
        "single character). Made by tools/english_word_ranks.py from BERT's uncased vocabulary."
    )
    TARGET.write_text(header + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines):,} forms to {TARGET.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
