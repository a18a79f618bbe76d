"""A store on a server keeps no backups of Timothy's: its backups are the server's job, and
asking to find or purge them says so plainly."""

from __future__ import annotations

import pytest

from timothy.errors import InvalidInputError
from timothy.memory.forget import backups_holding, purge_backups
from timothy.store.postgres import PostgresStore


def test_a_server_store_has_no_backups_to_find_and_purging_them_says_why(pg_url: str) -> None:
    with PostgresStore(pg_url, follow_changes=False) as store:
        memory = store.memories.add("The owner's locker code is 4471")
        assert backups_holding(store, [memory.id]) == []
        with pytest.raises(InvalidInputError, match="backups are the server's job"):
            purge_backups(store, [memory.id])
        assert store.memories.get(memory.id).content == "The owner's locker code is 4471"
