"""Child process for the two-process test of the note of unknown changes: once told to go
(a line on stdin, so two of them start together), notes `count` changes of its own in the
note `path`, as the app and the `timothy` command would on one data folder."""

from __future__ import annotations

import sys
from pathlib import Path

from timothy.store.postgres.unsure import UnsureChanges


def main() -> None:
    path, prefix, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    notes = UnsureChanges(path)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()  # the go
    for number in range(count):
        memory_id = f"{prefix}-{number}"
        notes.note(("promoted", memory_id), {"id": memory_id, "status": ["active"]})


if __name__ == "__main__":
    main()
