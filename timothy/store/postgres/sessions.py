"""Conversations and their messages on the shared server: `timothy.store.sessions`'s one
implementation in PostgreSQL's dialect, with the server's own text search."""

from __future__ import annotations

from typing import Any

from timothy.store.dialect import POSTGRES
from timothy.store.postgres.database import PgDatabase
from timothy.store.sessions import BaseSessionRepository
from timothy.text import query_terms


class PgSessionRepository(BaseSessionRepository[PgDatabase]):
    """Sessions newest first; messages in the order they were said. A conversation-list
    search reads the messages' tsvector column."""

    dialect = POSTGRES

    def _text_query(self, search: str) -> tuple[str, tuple[Any, ...]] | None:
        terms = query_terms(search)
        if not terms:
            return None
        # \\w+ terms: no quote or operator reaches the query; the last is a prefix.
        query = " & ".join(f"'{t}'" for t in terms) + ":*"
        return (
            "SELECT m.session_id, m.id FROM messages m "
            "WHERE m.tsv @@ to_tsquery('english', %s) AND m.role <> 'summary'",
            (query,),
        )
