"""Child process for the two-process test of the outbox: once told to go (a line on stdin),
either keeps `count` new memories in the outbox `path` ("keep", as the app does while the
server is away), or hands over what waits there until the keeper is done ("hand-over", as
a `timothy` command does when it opens the store), printing each id it handed over."""

from __future__ import annotations

import sys
from pathlib import Path

from timothy.store.ids import new_id
from timothy.store.postgres.outbox import Outbox
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType, utc_now


def new_memory(content: str) -> Memory:
    """A memory as `remember` makes one (its id made here), before any store has it."""
    moment = utc_now()
    return Memory(
        id=new_id(moment),
        type=MemoryType.SEMANTIC,
        content=content,
        status=MemoryStatus.ACTIVE,
        confidence=1.0,
        source=MemorySource.MANUAL,
        session_id=None,
        supersedes=None,
        superseded_by=None,
        created_at=moment,
        last_confirmed_at=moment,
        last_retrieved_at=None,
    )


def main() -> None:
    role, path, count = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    outbox = Outbox(path)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()  # the go
    if role == "keep":
        for number in range(count):
            outbox.keep(new_memory(f"kept while the server was away, number {number}"))
        return

    def write(memories: list[Memory]) -> None:  # the server takes them
        sys.stdout.write("".join(memory.id + "\n" for memory in memories))
        sys.stdout.flush()

    done = path.with_name("keeper-done")
    while not done.exists():
        outbox.hand_over(write)


if __name__ == "__main__":
    main()
