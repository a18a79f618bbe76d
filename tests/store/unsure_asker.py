"""Child process for the death-while-asking test: the app's store (on the data folder
`folder`, reaching the server at `url`) confirms memory `memory_id` once told to go (a line
on stdin), logging to stderr, and goes on asking whether it landed for minutes: the parent
kills it while it asks."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from timothy.store.postgres import PostgresStore

ASKING_S = 300.0  # far longer than the test: it is killed while it asks


def main() -> None:
    url, folder, memory_id = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    store = PostgresStore(url, outbox_dir=folder, follow_changes=False, connect_timeout=2)
    store.memories.landed_wait_s = ASKING_S
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()  # the go
    store.memories.promote(memory_id)


if __name__ == "__main__":
    main()
