"""Conversations and their messages on the shared server: `timothy.store.sessions`'s one
implementation in PostgreSQL's dialect, with the server's own text search."""

from __future__ import annotations

from typing import Any

from timothy.store.dialect import POSTGRES
from timothy.store.postgres.database import PgDatabase
from timothy.store.postgres.forget import move_forgets_mark, vacuum
from timothy.store.sessions import BaseSessionRepository
from timothy.text import query_terms, spellings


class PgSessionRepository(BaseSessionRepository[PgDatabase]):
    """Sessions newest first; messages in the order they were said. A conversation-list
    search reads the messages' tsvector column."""

    dialect = POSTGRES

    def _forgets_taken(self, conn: Any) -> None:
        move_forgets_mark(conn)  # each machine's conversation mirror reads them again

    def _compact(self) -> None:
        vacuum(self.db)

    def _text_query(self, search: str) -> tuple[str, tuple[Any, ...]] | None:
        terms = query_terms(search)
        if not terms:
            return None
        # \\w+ terms: no quote or operator reaches the query; the last is a prefix. A term
        # is any of its spellings with "ß" (the index keeps "ß" as written: `spellings`).
        groups = []
        for place, term in enumerate(terms, start=1):
            typed = place == len(terms)
            forms = [f"'{form}'" + (":*" if typed else "") for form in spellings(term, typed=typed)]
            groups.append(forms[0] if len(forms) == 1 else f"({' | '.join(forms)})")
        query = " & ".join(groups)
        return (
            "SELECT m.session_id, m.id FROM messages m "
            "WHERE m.tsv @@ to_tsquery('english', %s) AND m.role <> 'summary'",
            (query,),
        )
