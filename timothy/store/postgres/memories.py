"""The memory repository on PostgreSQL: the same lifecycle, chains and consolidation queries as
`timothy.store.memories.MemoryRepository`, with the same checks (shared from there).

A write that finds a memory changed since it was read (another machine got there first) raises
ChangedElsewhereError with both versions, and changes nothing.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

from timothy.errors import (
    ChangedElsewhereError,
    IllegalTransitionError,
    InvalidInputError,
    NotFoundError,
    StoreUnreachableError,
)
from timothy.store.forget import ForgetReport, Redaction
from timothy.store.ids import could_be_stored, new_id
from timothy.store.memories import (
    ConfidenceDecay,
    MemoryListener,
    Neighbour,
    StaleMemory,
    parse_source,
    parse_status,
    parse_type,
    validate_confidence,
    validate_content,
    validate_entities,
)
from timothy.store.postgres.database import PgDatabase
from timothy.store.postgres.forget import forget
from timothy.store.postgres.outbox import Outbox
from timothy.store.postgres.rows import (
    COLUMNS,
    CONFIRMED_OR_CREATED,
    RETRIEVED_OR_CREATED,
    VERSIONS,
    Conn,
    local_day,
    rows_to_memories,
)
from timothy.store.records import (
    Memory,
    MemorySource,
    MemoryStatus,
    MemoryType,
    utc_now,
)
from timothy.text import query_terms

log = logging.getLogger(__name__)


def browse_query(text: str, *, match_any: bool) -> str | None:
    """A to_tsquery expression for the browser's search: every term quoted, joined by AND
    (or OR), the last a prefix (search as you type). None when no term is left."""
    terms = query_terms(text)
    if not terms:
        return None
    # query_terms gives \\w+ runs: no quote or operator can reach the query.
    quoted = [f"'{term}'" for term in terms]
    quoted[-1] += ":*"
    return (" | " if match_any else " & ").join(quoted)


def changed_elsewhere(memory_id: str, ours: str, theirs: str) -> ChangedElsewhereError:
    """The plain words for an edit that lost the race with another machine: both texts, so
    the owner can keep either (nothing was written; their version stands)."""
    return ChangedElsewhereError(
        f"Memory {memory_id} was changed on another machine (or in another window) while "
        f"you edited it, so your edit was not saved. It now says: “{theirs}”. Your version: "
        f"“{ours}”. Edit it again to keep yours.",
        ours=ours,
        theirs=theirs,
    )


class PgMemoryRepository:
    """Every read and write of memories on the shared server."""

    def __init__(self, db: PgDatabase, outbox: Outbox | None = None) -> None:
        self.db = db
        self.listeners: list[MemoryListener] = []
        # Where new memories wait while the server does not answer (None: such a write fails).
        self.outbox = outbox

    # -- reading -----------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory:
        if not could_be_stored(memory_id):
            raise NotFoundError(f"No memory has the id {memory_id!r}.")
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM memories m WHERE m.id = %s", (memory_id,)
            ).fetchall()
            memories = rows_to_memories(conn, rows)
        if not memories:
            raise NotFoundError(f"No memory has the id {memory_id!r}.")
        return memories[0]

    def get_many(self, memory_ids: Iterable[str]) -> dict[str, Memory]:
        ids = [i for i in dict.fromkeys(memory_ids) if could_be_stored(i)]
        if not ids:
            return {}
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM memories m WHERE m.id = ANY(%s)", (ids,)
            ).fetchall()
            return {memory.id: memory for memory in rows_to_memories(conn, rows)}

    def around(
        self, memory_ids: Iterable[str], width: int, known: Mapping[str, Memory] | None = None
    ) -> dict[str, builtins.list[Neighbour]]:
        """For each of `memory_ids` that is an active episodic memory of a session: the
        active episodic memories of that session within `width` places of it, in the order
        they were made (created_at, then insertion), nearest first (as the file's
        `MemoryRepository.around`). `known` saves reading again what the caller holds."""
        ids = [i for i in dict.fromkeys(memory_ids) if could_be_stored(i)]
        if not ids or width <= 0:
            return {}
        known = known or {}
        with self.db.read() as conn:
            said: dict[str, builtins.list[str]] = {}
            for memory_id, session in conn.execute(
                "SELECT id, session_id FROM memories WHERE session_id IN ("
                "SELECT session_id FROM memories WHERE id = ANY(%s) AND session_id IS NOT NULL"
                ") AND type = 'episodic' AND status = 'active' "
                "ORDER BY session_id, created_at, seq",
                (ids,),
            ).fetchall():
                said.setdefault(str(session), []).append(str(memory_id))
            if not said:
                return {}
            places = {m: (order, n) for order in said.values() for n, m in enumerate(order)}
            pairs: builtins.list[tuple[str, str, int]] = []
            for seed in ids:
                if seed not in places:
                    continue
                order, place = places[seed]
                for other in range(max(0, place - width), min(len(order), place + width + 1)):
                    if other != place:
                        pairs.append((seed, order[other], abs(other - place)))
            wanted = sorted({n for _, n, _ in pairs if n not in known})
            read: dict[str, Memory] = {}
            if wanted:
                rows = conn.execute(
                    f"SELECT {COLUMNS} FROM memories m WHERE m.id = ANY(%s)", (wanted,)
                ).fetchall()
                read = {memory.id: memory for memory in rows_to_memories(conn, rows)}
        found: dict[str, builtins.list[Neighbour]] = {}
        for seed, neighbour, distance in pairs:
            memory = known.get(neighbour) or read.get(neighbour)
            if memory is not None:
                found.setdefault(seed, []).append(Neighbour(memory, distance))
        for neighbours in found.values():
            neighbours.sort(key=lambda n: n.distance)
        return found

    def list(
        self,
        *,
        status: MemoryStatus | str | Iterable[MemoryStatus | str] | None = None,
        type: MemoryType | str | Iterable[MemoryType | str] | None = None,
        text: str | None = None,
        session_id: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        oldest_first: bool = False,
        match_any: bool = False,
    ) -> builtins.list[Memory]:
        """Memories matching every filter given, newest first (or best text match first)."""
        where: builtins.list[str] = []
        params: builtins.list[object] = []
        order = "m.seq ASC" if oldest_first else "m.seq DESC"
        if text is not None and text.strip():
            query = browse_query(text, match_any=match_any)
            if query is None:
                return []
            where.append("m.content_tsv @@ to_tsquery('english', %s)")
            params.append(query)
            order = "ts_rank(m.content_tsv, to_tsquery('english', %s)) DESC, m.seq DESC"
        if status is not None:
            statuses = [status] if isinstance(status, str) else builtins.list(status)
            where.append("m.status = ANY(%s)")
            params.append([parse_status(s).value for s in statuses])
        if type is not None:
            types = [type] if isinstance(type, str) else builtins.list(type)
            where.append("m.type = ANY(%s)")
            params.append([parse_type(t).value for t in types])
        if session_id is not None:
            where.append("m.session_id = %s")
            params.append(session_id)
        sql = f"SELECT {COLUMNS} FROM memories m"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY {order} LIMIT %s OFFSET %s"
        if text is not None and text.strip():
            params.append(browse_query(text, match_any=match_any))
        params += [limit, int(offset)]
        with self.db.read() as conn:
            return rows_to_memories(conn, conn.execute(sql, params).fetchall())

    def count(
        self,
        *,
        status: MemoryStatus | str | None = None,
        type: MemoryType | str | None = None,
    ) -> int:
        where, params = [], []
        if status is not None:
            where.append("status = %s")
            params.append(parse_status(status).value)
        if type is not None:
            where.append("type = %s")
            params.append(parse_type(type).value)
        sql = "SELECT count(*) FROM memories"
        if where:
            sql += " WHERE " + " AND ".join(where)
        with self.db.read() as conn:
            row = conn.execute(sql, params).fetchone()
        return 0 if row is None else int(row[0])

    def unconfirmed_since(self, cutoffs: Mapping[MemoryType, datetime]) -> builtins.list[Memory]:
        found: builtins.list[Memory] = []
        with self.db.read() as conn:
            for memory_type, cutoff in cutoffs.items():
                rows = conn.execute(
                    f"SELECT {COLUMNS} FROM memories m WHERE m.status = 'active' "
                    f"AND m.type = %s AND {CONFIRMED_OR_CREATED} < %s",
                    (parse_type(memory_type).value, cutoff),
                ).fetchall()
                found.extend(rows_to_memories(conn, rows))
        found.sort(key=lambda m: (m.last_confirmed_at or m.created_at, m.id))
        return found

    def chain(self, memory_id: str) -> builtins.list[Memory]:
        self.get(memory_id)  # raises NotFoundError
        with self.db.read() as conn:
            rows = conn.execute(
                f"{VERSIONS} SELECT {COLUMNS} FROM memories m JOIN versions v ON v.id = m.id "
                "ORDER BY m.created_at, m.seq",
                {"id": memory_id},
            ).fetchall()
            return rows_to_memories(conn, rows)

    # -- writing -----------------------------------------------------------------------

    def announce(self, event: str, memory: Memory) -> None:
        """Tell the listeners of a change made on another machine (see changes.py)."""
        self._notify(event, memory)

    def _notify(self, event: str, memory: Memory) -> None:
        for listener in builtins.list(self.listeners):
            try:
                listener(event, memory)
            except Exception:  # a listener must never undo or fail a committed write
                log.exception("memory listener failed on %s", event)

    def insert(self, conn: Conn, memory: Memory) -> None:
        """Write one memory row and its entities as they are (inside the caller's transaction)."""
        self._insert(conn, memory, if_missing=False)

    def _insert(self, conn: Conn, memory: Memory, *, if_missing: bool) -> bool:
        """`insert`; with `if_missing`, a memory whose id is stored already is left as it is
        (False)."""
        row = conn.execute(
            "INSERT INTO memories (id, type, content, day, status, confidence, source, "
            "session_id, supersedes, superseded_by, created_at, last_confirmed_at, "
            "last_retrieved_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
            + ("ON CONFLICT (id) DO NOTHING " if if_missing else "")
            + "RETURNING seq",
            (
                memory.id,
                memory.type.value,
                memory.content,
                local_day(memory.created_at),
                memory.status.value,
                memory.confidence,
                memory.source.value,
                memory.session_id,
                memory.supersedes,
                memory.superseded_by,
                memory.created_at,
                memory.last_confirmed_at,
                memory.last_retrieved_at,
            ),
        ).fetchone()
        if row is None:  # stored already (if_missing)
            return False
        entities = validate_entities(memory.entities)
        if entities:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO memory_entities (memory_seq, position, name, norm) "
                    "VALUES (%s, %s, %s, %s)",
                    [
                        (row[0], position, name, norm)
                        for position, (name, norm) in enumerate(entities)
                    ],
                )
        return True

    def _create(
        self,
        content: str,
        *,
        status: MemoryStatus,
        type: MemoryType | str,
        entities: Iterable[str],
        confidence: float,
        source: MemorySource | str,
        session_id: str | None,
        now: datetime | None,
        supersedes: str | None = None,
    ) -> Memory:
        moment = now or utc_now()
        return Memory(
            id=new_id(moment),
            type=parse_type(type),
            content=validate_content(content),
            status=status,
            confidence=validate_confidence(confidence),
            source=parse_source(source),
            session_id=session_id,
            supersedes=supersedes,
            superseded_by=None,
            created_at=moment,
            last_confirmed_at=moment if status is MemoryStatus.ACTIVE else None,
            last_retrieved_at=None,
            entities=tuple(name for name, _ in validate_entities(entities)),
        )

    def _save_new(self, memory: Memory, event: str) -> Memory:
        """A new memory (staged or added); kept on this machine while the server does not
        answer, and handed over when it does (see outbox.py)."""
        try:
            with self.db.write() as conn:
                self.insert(conn, memory)
        except StoreUnreachableError:
            if self.outbox is None:
                raise
            self.outbox.keep(memory)
        else:
            self.hand_over_pending()
        self._notify(event, memory)
        return memory

    def hand_over_pending(self) -> int:
        """Give the server the memories kept here while it did not answer."""
        if self.outbox is None:
            return 0

        def write(memories: builtins.list[Memory]) -> None:
            with self.db.write() as conn:
                for memory in memories:
                    self._insert(conn, memory, if_missing=True)

        return self.outbox.hand_over(write)

    def stage(
        self,
        content: str,
        *,
        type: MemoryType | str = MemoryType.SEMANTIC,
        entities: Iterable[str] = (),
        confidence: float = 0.8,
        source: MemorySource | str = MemorySource.EXTRACTION,
        session_id: str | None = None,
        now: datetime | None = None,
    ) -> Memory:
        memory = self._create(
            content,
            status=MemoryStatus.STAGED,
            type=type,
            entities=entities,
            confidence=confidence,
            source=source,
            session_id=session_id,
            now=now,
        )
        return self._save_new(memory, "staged")

    def add(
        self,
        content: str,
        *,
        type: MemoryType | str = MemoryType.SEMANTIC,
        entities: Iterable[str] = (),
        confidence: float = 1.0,
        source: MemorySource | str = MemorySource.MANUAL,
        session_id: str | None = None,
        now: datetime | None = None,
    ) -> Memory:
        memory = self._create(
            content,
            status=MemoryStatus.ACTIVE,
            type=type,
            entities=entities,
            confidence=confidence,
            source=source,
            session_id=session_id,
            now=now,
        )
        return self._save_new(memory, "added")

    def _transition(
        self,
        memory_id: str,
        *,
        allowed: tuple[MemoryStatus, ...],
        verb: str,
        assignments: str,
        params: Sequence[object],
    ) -> None:
        if not could_be_stored(memory_id):
            raise NotFoundError(f"No memory has the id {memory_id!r}.")
        with self.db.write() as conn:
            row = conn.execute(
                "SELECT status FROM memories WHERE id = %s FOR UPDATE", (memory_id,)
            ).fetchone()
            if row is None:
                raise NotFoundError(f"No memory has the id {memory_id!r}.")
            current = MemoryStatus(str(row[0]))
            if current not in allowed:
                names = " or ".join(s.value for s in allowed)
                raise IllegalTransitionError(
                    f"Memory {memory_id} is {current.value}; only a {names} memory can be {verb}."
                )
            conn.execute(f"UPDATE memories SET {assignments} WHERE id = %s", (*params, memory_id))

    def promote(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        self._transition(
            memory_id,
            allowed=(MemoryStatus.STAGED,),
            verb="confirmed",
            assignments="status = 'active', last_confirmed_at = %s",
            params=(now or utc_now(),),
        )
        memory = self.get(memory_id)
        self._notify("promoted", memory)
        return memory

    def reconfirm(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        self._transition(
            memory_id,
            allowed=(MemoryStatus.ACTIVE,),
            verb="re-confirmed",
            assignments="last_confirmed_at = %s",
            params=(now or utc_now(),),
        )
        memory = self.get(memory_id)
        self._notify("reconfirmed", memory)
        return memory

    def confirm(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        current = self.get(memory_id)
        if current.status is MemoryStatus.ACTIVE:
            return self.reconfirm(memory_id, now=now)
        if current.status is not MemoryStatus.STAGED:
            raise IllegalTransitionError(
                f"Memory {memory_id} is {current.status.value}; only a staged or active "
                "memory can be confirmed."
            )
        return self.promote(memory_id, now=now)

    def reject(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        self._transition(
            memory_id,
            allowed=(MemoryStatus.STAGED, MemoryStatus.ACTIVE),
            verb="rejected",
            assignments="status = 'rejected'",
            params=(),
        )
        memory = self.get(memory_id)
        self._notify("rejected", memory)
        return memory

    def archive(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        self._transition(
            memory_id,
            allowed=(MemoryStatus.ACTIVE,),
            verb="archived",
            assignments="status = 'archived'",
            params=(),
        )
        memory = self.get(memory_id)
        self._notify("archived", memory)
        return memory

    def restore(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        with self.db.write() as conn:
            rows = conn.execute(
                "UPDATE memories SET status = CASE status WHEN 'rejected' THEN 'staged' "
                "ELSE 'active' END WHERE id = %s AND status IN ('rejected', 'archived') "
                "RETURNING id",
                (memory_id,),
            ).fetchall()
            if not rows:
                found = conn.execute(
                    "SELECT status FROM memories WHERE id = %s", (memory_id,)
                ).fetchone()
                if found is None:
                    raise NotFoundError(f"No memory has the id {memory_id!r}.")
                raise IllegalTransitionError(
                    f"Memory {memory_id} is {found[0]}; only a rejected or archived memory "
                    "can be restored."
                )
        memory = self.get(memory_id)
        self._notify("restored", memory)
        return memory

    def supersede(
        self,
        memory_id: str,
        content: str,
        *,
        entities: Iterable[str] | None = None,
        type: MemoryType | str | None = None,
        confidence: float | None = None,
        source: MemorySource | str = MemorySource.MANUAL,
        now: datetime | None = None,
    ) -> Memory:
        """An edit: the new version is inserted active, the old one marked superseded.

        When the version read here was changed meanwhile (on another machine: edited,
        rejected, archived), nothing is written and ChangedElsewhereError carries both texts.
        """
        old = self.get(memory_id)
        allowed = (MemoryStatus.STAGED, MemoryStatus.ACTIVE)
        if old.status is MemoryStatus.SUPERSEDED:  # edited elsewhere since the owner saw it
            with self.db.read() as conn:
                theirs = self._newest_version(conn, old.id)
            raise changed_elsewhere(memory_id, validate_content(content), theirs)
        if old.status not in allowed:
            raise IllegalTransitionError(
                f"Memory {memory_id} is {old.status.value}; only a staged or active memory "
                "can be edited."
            )
        new = self._create(
            content,
            status=MemoryStatus.ACTIVE,
            type=old.type if type is None else type,
            entities=old.entities if entities is None else entities,
            confidence=1.0 if confidence is None else confidence,
            source=source,
            session_id=old.session_id,
            now=now,
            supersedes=old.id,
        )
        with self.db.write() as conn:
            changed = conn.execute(
                "UPDATE memories SET status = 'superseded', superseded_by = %s "
                "WHERE id = %s AND status IN ('staged', 'active') RETURNING id",
                (new.id, old.id),
            ).fetchall()
            if not changed:
                theirs = self._newest_version(conn, old.id)
                raise changed_elsewhere(memory_id, new.content, theirs)
            self.insert(conn, new)
        self._notify("superseded", new)
        return new

    def _newest_version(self, conn: Conn, memory_id: str) -> str:
        """What the chain of `memory_id` says now, in words for the owner."""
        rows = conn.execute(
            f"{VERSIONS} SELECT m.content, m.status FROM memories m "
            "JOIN versions v ON v.id = m.id ORDER BY m.created_at DESC, m.seq DESC LIMIT 1",
            {"id": memory_id},
        ).fetchall()
        if not rows:
            return "(it was forgotten)"
        content, status = rows[0]
        return str(content) if status in ("staged", "active") else f"{content} ({status})"

    def mark_retrieved(self, memory_ids: Iterable[str], *, now: datetime | None = None) -> None:
        ids = builtins.list(dict.fromkeys(memory_ids))
        if not ids:
            return
        with self.db.write() as conn:
            conn.execute(
                "UPDATE memories SET last_retrieved_at = %s WHERE id = ANY(%s)",
                (now or utc_now(), ids),
            )

    # -- consolidation -----------------------------------------------------------------

    def merge(
        self, member_ids: Sequence[str], content: str, *, now: datetime | None = None
    ) -> Memory:
        """Replace near-duplicates by one canonical memory, in one transaction (see
        MemoryRepository.merge: the same rules)."""
        ids = builtins.list(dict.fromkeys(member_ids))
        if len(ids) < 2:
            raise InvalidInputError("A merge needs at least two different memories.")
        text = validate_content(content)
        moment = now or utc_now()
        with self.db.write() as conn:
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM memories m WHERE m.id = ANY(%s) "
                "ORDER BY m.created_at, m.seq FOR UPDATE",
                (ids,),
            ).fetchall()
            members = rows_to_memories(conn, rows)
            seqs = {memory.id: int(row[0]) for memory, row in zip(members, rows, strict=True)}
            missing = [memory_id for memory_id in ids if memory_id not in seqs]
            if missing:
                raise NotFoundError(f"No memory has the id {missing[0]!r}.")
            for member in members:
                if member.status is not MemoryStatus.ACTIVE:
                    raise IllegalTransitionError(
                        f"Memory {member.id} is {member.status.value}; only active memories "
                        "can be merged."
                    )
            types = {member.type for member in members}
            if len(types) > 1:
                raise InvalidInputError(
                    "Only memories of one type can be merged; these are "
                    + ", ".join(sorted(t.value for t in types))
                    + "."
                )
            confirmed = [m.last_confirmed_at for m in members if m.last_confirmed_at is not None]
            retrieved = [m.last_retrieved_at for m in members if m.last_retrieved_at is not None]
            sessions = {member.session_id for member in members}
            canonical = Memory(
                id=new_id(moment),
                type=members[0].type,
                content=text,
                status=MemoryStatus.ACTIVE,
                confidence=max(member.confidence for member in members),
                source=MemorySource.CONSOLIDATION,
                session_id=sessions.pop() if len(sessions) == 1 else None,
                supersedes=members[-1].id,
                superseded_by=None,
                created_at=moment,
                last_confirmed_at=max(confirmed) if confirmed else None,
                last_retrieved_at=max(retrieved) if retrieved else None,
                entities=tuple(
                    name
                    for name, _ in validate_entities(
                        name for member in members for name in member.entities
                    )
                ),
            )
            self.insert(conn, canonical)
            changed = conn.execute(
                "UPDATE memories SET status = 'superseded', superseded_by = %s "
                "WHERE id = ANY(%s) AND status = 'active' RETURNING id",
                (canonical.id, ids),
            ).fetchall()
            if len(changed) != len(ids):
                raise IllegalTransitionError("The memories changed meanwhile; try again.")
            if canonical.last_confirmed_at is not None:
                conn.execute(
                    "INSERT INTO memory_decay (memory_seq, anchor, periods, decayed_at) "
                    "SELECT (SELECT seq FROM memories WHERE id = %s), min(anchor), "
                    "max(periods), max(decayed_at) FROM memory_decay "
                    "WHERE memory_seq = ANY(%s) AND anchor = %s HAVING count(*) > 0",
                    (canonical.id, builtins.list(seqs.values()), canonical.last_confirmed_at),
                )
        self._notify("superseded", canonical)
        return canonical

    def unretrieved(self, type: MemoryType | str, since: datetime) -> builtins.list[Memory]:
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM memories m WHERE m.status = 'active' AND m.type = %s "
                f"AND {RETRIEVED_OR_CREATED} <= %s ORDER BY m.seq",
                (parse_type(type).value, since),
            ).fetchall()
            return rows_to_memories(conn, rows)

    def archive_unretrieved(
        self, type: MemoryType | str, since: datetime, *, now: datetime | None = None
    ) -> builtins.list[Memory]:
        with self.db.write() as conn:
            rows = conn.execute(
                "UPDATE memories AS m SET status = 'archived' WHERE m.status = 'active' "
                f"AND m.type = %s AND {RETRIEVED_OR_CREATED} <= %s RETURNING id",
                (parse_type(type).value, since),
            ).fetchall()
        archived = self.get_many(str(row[0]) for row in rows)
        result = sorted(archived.values(), key=lambda m: (m.created_at, m.id))
        for memory in result:
            self._notify("archived", memory)
        return result

    def unconfirmed(self, type: MemoryType | str, since: datetime) -> builtins.list[StaleMemory]:
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {COLUMNS}, {CONFIRMED_OR_CREATED}, coalesce(d.periods, 0) "
                "FROM memories m LEFT JOIN memory_decay d "
                f"ON d.memory_seq = m.seq AND d.anchor = {CONFIRMED_OR_CREATED} "
                f"WHERE m.status = 'active' AND m.type = %s AND {CONFIRMED_OR_CREATED} < %s "
                "ORDER BY m.seq",
                (parse_type(type).value, since),
            ).fetchall()
            memories = rows_to_memories(conn, rows)
        return [
            StaleMemory(memory, row[13].astimezone(UTC), int(row[14]))
            for memory, row in zip(memories, rows, strict=True)
        ]

    def decay(
        self, changes: Iterable[ConfidenceDecay], *, now: datetime | None = None
    ) -> builtins.list[Memory]:
        moment = now or utc_now()
        lowered: builtins.list[str] = []
        with self.db.write() as conn:
            for change in changes:
                confidence = validate_confidence(change.confidence)
                if change.periods < 1:
                    raise InvalidInputError("A decay covers at least one stale period.")
                row = conn.execute(
                    "UPDATE memories AS m SET confidence = %s WHERE m.id = %s "
                    f"AND m.status = 'active' AND {CONFIRMED_OR_CREATED} = %s "
                    "AND m.confidence > %s RETURNING seq",
                    (confidence, change.memory_id, change.anchor, confidence),
                ).fetchone()
                if row is None:
                    continue
                conn.execute(
                    "INSERT INTO memory_decay (memory_seq, anchor, periods, decayed_at) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT (memory_seq) DO UPDATE SET "
                    "anchor = excluded.anchor, periods = excluded.periods, "
                    "decayed_at = excluded.decayed_at",
                    (row[0], change.anchor, change.periods, moment),
                )
                lowered.append(change.memory_id)
        found = self.get_many(lowered)
        result = [found[memory_id] for memory_id in lowered if memory_id in found]
        for memory in result:
            self._notify("decayed", memory)
        return result

    # -- forgetting for good -------------------------------------------------------------

    def forget(
        self,
        memory_ids: Iterable[str],
        *,
        chain: bool = False,
        redaction: Redaction | None = None,
    ) -> ForgetReport:
        return forget(
            self.db, self._notify, builtins.list(dict.fromkeys(memory_ids)), chain, redaction
        )
