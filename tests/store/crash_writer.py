"""Child process for the crash-safety test: adds memories forever, printing each id once the
write has returned (so the parent knows which writes were acknowledged before the kill)."""

from __future__ import annotations

import sys
from pathlib import Path

from timothy.store import Store


def main() -> None:
    store = Store.open(Path(sys.argv[1]))
    number = 0
    while True:
        memory = store.memories.add(
            f"crash test memory {number} " + "filler " * (number % 50),
            entities=[f"entity{number % 7}"],
        )
        sys.stdout.write(memory.id + "\n")
        sys.stdout.flush()
        number += 1


if __name__ == "__main__":
    main()
