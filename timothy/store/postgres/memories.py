"""The memory repository on PostgreSQL: `timothy.store.memories`'s one implementation in
PostgreSQL's dialect, with the server's text search, the owner's local day kept beside each
memory (the text leg finds it), the outbox, and a VACUUM after forgetting.

A write that finds a memory changed since it was read (another machine got there first) raises
ChangedElsewhereError with both versions, and changes nothing.

A reply can be lost after the server committed (the server dies, or the connection drops, as
the COMMIT's answer is on its way): the change landed, but this machine only sees the
connection fail. An edit, a confirmation, a rejection, an archival or a restore then asks the
server, on a connection of its own, whether it did (the edit by its new version's id, made
here before the write; a status change by the status, and the confirmation time, it wrote),
and reports what it finds: saved, or not saved with nothing changed. When the server does not
answer that question either, the owner is told that it is not known yet, and repeating the
change is safe: an edit whose words the next version already says is that version (no second
version, no "changed on another machine"), and a status change or a forget this machine
could not check that is found done is done. What could not be checked is noted in the data
folder (unsure.py), so this holds after a restart too; and when the server answers again the
store asks about each, and tells its listeners what did land (a forgotten memory leaves the
window). New memories need none of this: their ids are made here too, and the outbox hands
them over only if missing.
"""

from __future__ import annotations

import builtins
import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from timothy.errors import ChangedElsewhereError, StoreError, StoreUnreachableError
from timothy.store.dialect import POSTGRES
from timothy.store.forget import gone_record
from timothy.store.ids import could_be_stored
from timothy.store.memories import (
    COLUMNS,
    VERSIONS,
    BaseMemoryRepository,
    R,
    TextFilter,
    row_to_memory,
    validate_content,
)
from timothy.store.postgres.database import PgDatabase
from timothy.store.postgres.forget import remove_memories, vacuum
from timothy.store.postgres.outbox import Outbox
from timothy.store.postgres.rows import Conn, local_day
from timothy.store.postgres.unsure import Change, UnsureChanges
from timothy.store.records import Memory, MemoryStatus, parse_time
from timothy.text import spellings, typed_terms

log = logging.getLogger(__name__)

# After a lost reply, how long the store keeps asking a server that does not answer whether
# the change landed (on the caller's worker, never the GUI thread), and how often.
LANDED_WAIT_S = 5.0
LANDED_RETRY_S = 0.25

# The owner's words for a change whose reply was lost, by its event.
_CHANGES = {
    "superseded": "your edit of memory {}",
    "promoted": "confirming memory {}",
    "reconfirmed": "re-confirming memory {}",
    "rejected": "rejecting memory {}",
    "archived": "archiving memory {}",
    "restored": "restoring memory {}",
    "forgotten": "forgetting memory {}",
}

# Memories with their entity names (in their order) in one statement: one round trip, where
# reading the entities after the rows takes two (a recall reads each leg's hits so).
_WITH_ENTITIES = f"""
SELECT {COLUMNS}, ARRAY(
    SELECT e.name FROM memory_entities e WHERE e.memory_seq = m.seq ORDER BY e.position)
FROM memories m WHERE m.id = ANY(%s)
"""


def browse_filter(text: str, *, match_any: bool) -> TextFilter | None:
    """The browser's search on the server (as `MemoryRepository._text_filter` on the file):
    whole words as English stems (`content_tsv`: "running" finds "runs"); the last word, perhaps
    still being typed, as the start of a word as written (`words_tsv`: "runn" finds "running",
    whose stem "run" it is no prefix of, even a stop word: `typed_terms`) or as a whole word
    like the others. Every term AND (or, `match_any`, OR), each as any of its spellings
    (`spellings`: "strasse" or "straße"); None when no term is left."""
    terms = typed_terms(text)
    if not terms:
        return None
    # typed_terms gives \\w+ runs: no quote or operator can reach the query.
    quoted = [
        "(" + " | ".join(f"'{spelling}'" for spelling in spellings(term)) + ")" for term in terms
    ]
    typed = " | ".join(f"'{spelling}':*" for spelling in spellings(terms[-1], typed=True))
    if len(terms) > 1 and not match_any:
        # Led and ranked by the whole words; the last one only narrows.
        whole = " & ".join(quoted[:-1])
        return TextFilter(
            join="",
            where=(
                "m.content_tsv @@ to_tsquery('english', ?) AND (m.words_tsv @@ "
                "to_tsquery('simple', ?) OR m.content_tsv @@ to_tsquery('english', ?))"
            ),
            params=(whole, typed, quoted[-1]),
            order="ts_rank(m.content_tsv, to_tsquery('english', ?)) DESC, m.seq DESC",
            order_params=(whole,),
        )
    # Any word (or the one word): what either column finds, ranked by both.
    stemmed = " | ".join(quoted)
    return TextFilter(
        join="",
        where=(
            "(m.content_tsv @@ to_tsquery('english', ?) OR m.words_tsv @@ to_tsquery('simple', ?))"
        ),
        params=(stemmed, typed),
        order=(
            "ts_rank(m.content_tsv, to_tsquery('english', ?)) "
            "+ ts_rank(m.words_tsv, to_tsquery('simple', ?)) DESC, m.seq DESC"
        ),
        order_params=(stemmed, typed),
    )


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


class PgMemoryRepository(BaseMemoryRepository[PgDatabase]):
    """Every read and write of memories on the shared server."""

    dialect = POSTGRES

    def __init__(
        self,
        db: PgDatabase,
        outbox: Outbox | None = None,
        *,
        local_copies: Callable[[], bool] | None = None,
        unsure: UnsureChanges | None = None,
    ) -> None:
        super().__init__(db)
        # Where new memories wait while the server does not answer (None: such a write fails).
        self.outbox = outbox
        # Clears this machine's own copies of forgotten words (the conversation mirror's)
        # after a forget; whether it could.
        self.local_copies = local_copies
        # How long a change whose reply was lost asks the server whether it landed.
        self.landed_wait_s = LANDED_WAIT_S
        # Changes whose outcome could not be learned (see _settle), noted in the data folder
        # (`unsure` None: in memory only): a retry of one that finds it done succeeds.
        self.unsure = unsure if unsure is not None else UnsureChanges(None)
        # Set while some noted change has not been asked about since (see settle_unsure).
        self.unsure_waiting = threading.Event()
        # The changes whose own question (see _settle) is under way on some thread.
        self._asking: set[Change] = set()
        self._asking_lock = threading.Lock()
        try:
            if self.unsure.unsettled():  # noted before a restart
                self.unsure_waiting.set()
        except OSError as exc:
            log.warning("could not read this machine's unknown changes: %s", exc)

    def get_many(self, memory_ids: Iterable[str], *, keep: bool = True) -> dict[str, Memory]:
        ids = [i for i in dict.fromkeys(memory_ids) if could_be_stored(i)]
        if not ids:
            return {}
        time_in = self.dialect.time_in
        with self.db.read() as conn:
            rows = conn.execute(_WITH_ENTITIES, (ids,)).fetchall()
        # Kept by the memory's own columns, as every other read keeps them (a row's entities
        # never change); here they come in the row's last column.
        # Names interned, as rows_to_memories does: kept memories share one copy of each.
        entities = {
            tuple(row[:-1]): tuple(sys.intern(str(name)) for name in row[-1]) for row in rows
        }
        memories = self.known.lookup(
            list(entities),
            lambda missing: [row_to_memory(key, entities[key], time_in) for key in missing],
            keep=keep,
        )
        return {memory.id: memory for memory in memories}

    def announce(self, event: str, memory: Memory) -> None:
        """Tell the listeners of a change made on another machine (see changes.py)."""
        self._notify(event, memory)

    # -- engine hooks ------------------------------------------------------------------

    def _text_filter(self, text: str, match_any: bool) -> TextFilter | None:
        return browse_filter(text, match_any=match_any)

    def _extra_columns(self, memory: Memory) -> dict[str, Any]:
        return {"day": local_day(memory.created_at)}

    def _superseded_meanwhile(
        self, old: Memory, content: str, same: Callable[[Memory], bool]
    ) -> Memory | None:
        ours = validate_content(content)
        with self.db.read() as conn:
            # Its next version is this very edit, still the newest: it landed already (a
            # retry after a lost reply; or another machine made the very same edit).
            after = None if old.superseded_by is None else self._read_one(conn, old.superseded_by)
            if after is not None and after.status is MemoryStatus.ACTIVE:
                # This machine's own edit whose outcome it could not learn: not another
                # machine's (the new words go on top of it, or it is this very edit).
                ours_unseen = after.supersedes == old.id and (
                    self._retried(("superseded", old.id)) is not None
                )
                if same(after) or ours_unseen:
                    return after
            # edited elsewhere since the owner saw it
            theirs = self._newest_version(conn, old.id)
        raise changed_elsewhere(old.id, ours, theirs)

    def _saved(
        self,
        write: Callable[[Any], R],
        landed: Callable[[Any], R | None],
        change: tuple[str, str],
        check: Callable[[], dict[str, Any]],
    ) -> R:
        sent = False

        def tracked(conn: Any) -> R:
            nonlocal sent
            sent = True  # the transaction is under way: from here a failure may hide a commit
            return write(conn)

        try:
            return super()._saved(tracked, landed, change, check)
        except StoreUnreachableError as exc:
            if not sent:  # refused before anything was sent: nothing changed
                raise
            return self._settle(landed, change, check, exc)

    def _settle(
        self,
        landed: Callable[[Any], R | None],
        change: Change,
        check: Callable[[], dict[str, Any]],
        lost: Exception,
    ) -> R:
        """What became of a change whose reply was lost: ask the server (on a connection of
        its own, for up to LANDED_WAIT_S) whether it landed; its result if so, otherwise
        StoreUnreachableError saying it was not saved, or that this is not known yet."""
        what = _CHANGES.get(change[0], "this change to memory {}").format(change[1])
        where = self.db.location
        # Noted before the first question, and cleared once it is answered: an app that
        # dies while asking leaves the note, and is asked about after the restart.
        with self._asking_about(change):
            self._note_unsure(change, check)
            log.info("the reply to %s was lost; asking the server whether it was saved", what)
            found = self._ask_landed(landed, what, lost)
            # Cleared while still marked as asked about: settle_unsure never sees the note
            # unmarked and answered, so a landing is reported once.
            self._settled(change)
        if found is None:
            raise StoreUnreachableError(
                f"The connection to the memory server {where} broke while {what} was being "
                "saved, and the server shows it was not saved: nothing changed. Try again."
            ) from lost
        log.info("the reply to %s was lost; the server shows it was saved", what)
        return found

    @contextlib.contextmanager
    def _asking_about(self, change: Change) -> Iterator[None]:
        """While `change`'s own question runs, `settle_unsure` leaves its note alone (it
        would ask the same, and report a landing twice)."""
        with self._asking_lock:
            self._asking.add(change)
        try:
            yield
        finally:
            with self._asking_lock:
                self._asking.discard(change)

    def _ask_landed(
        self, landed: Callable[[Any], R | None], what: str, lost: Exception
    ) -> R | None:
        """`landed` asked on a connection of its own until the server answers, for up to
        `landed_wait_s`; then StoreUnreachableError saying it is not known yet (the note
        stays, and is asked about when the server answers again)."""
        deadline = time.monotonic() + self.landed_wait_s
        while True:
            try:
                return self.db.ask(landed)
            except StoreUnreachableError:
                if time.monotonic() >= deadline:
                    self.unsure_waiting.set()
                    log.warning("could not learn whether %s was saved", what)
                    raise StoreUnreachableError(
                        f"The memory server {self.db.location} stopped answering while "
                        f"{what} was being saved, so Timothy cannot tell yet whether it was. "
                        "Once the server answers, look at the memory again; doing it again "
                        "is safe (it is never saved twice)."
                    ) from lost
                time.sleep(LANDED_RETRY_S)  # a server coming back: ask again, bounded

    def _note_unsure(self, change: Change, check: Callable[[], dict[str, Any]]) -> None:
        try:
            self.unsure.note(change, check())
        except OSError as exc:  # the owner is told it is unknown either way
            log.warning("could not note on this machine that %s is unknown: %s", change, exc)

    def _settled(self, change: Change) -> None:
        try:
            self.unsure.discard(change)
        except OSError as exc:
            log.warning("could not note on this machine that %s is known: %s", change, exc)

    def _retried(self, change: Change) -> dict[str, Any] | None:
        try:
            return self.unsure.take(change)
        except OSError as exc:  # read as not noted: the retry says what it finds
            log.warning("could not read this machine's unknown changes: %s", exc)
            return None

    def settle_unsure(self) -> int:
        """Ask the server (answering again) about each change whose outcome this machine
        could not learn: the listeners hear each that landed, as if its reply had come (a
        forgotten memory leaves the window), and a repeat of it stays its success; one that
        did not land is forgotten here (doing it again does it). How many landed. A server
        that stops answering meanwhile raises StoreUnreachableError: asked again later."""
        count = 0
        self.unsure_waiting.clear()  # one noted meanwhile sets it again
        for change, check in self.unsure.unsettled():
            with self._asking_lock:
                if change in self._asking:  # its own question is under way
                    continue
            try:
                with self.db.read() as conn:
                    found = self._landed_now(conn, check)
            except StoreError:
                self.unsure_waiting.set()
                raise
            if found is None:
                log.info("%s did not reach the server; it can be done again", change[0])
                self._settled(change)
                continue
            log.info("%s reached the server, its reply lost earlier", change[0])
            self.unsure.landed(change)
            if change[0] == "forgotten":
                # What the forget's own reply would have been followed by: the server's
                # dead rows and this machine's copies of the words go too.
                self.known.forget(memory.id for memory in found)
                self._compact()
            for memory in found:
                self._notify(change[0], memory)
            count += 1
        return count

    def _landed_now(self, conn: Any, check: dict[str, Any]) -> list[Memory] | None:
        """The memories as a change noted with `check` (see BaseMemoryRepository._saved)
        left them, if it landed; None if it did not."""
        if "gone" in check:
            gone = [str(memory_id) for memory_id in check["gone"]]
            return None if self._any_left(conn, gone) else [gone_record(i) for i in gone]
        memory = self._read_one(conn, str(check["id"]))
        if memory is None:
            return None
        if "status" in check and memory.status.value not in check["status"]:
            return None
        stamp = check.get("stamp")
        if stamp is not None and memory.last_confirmed_at != parse_time(str(stamp)):
            return None
        return [memory]

    def _lost_race(self, conn: Any, memory_id: str, content: str) -> Exception:
        return changed_elsewhere(memory_id, content, self._newest_version(conn, memory_id))

    def _remove(self, conn: Any, seqs: Sequence[int], messages_rewritten: bool) -> int:
        return remove_memories(conn, seqs, messages_rewritten)

    def _compact(self) -> bool:
        vacuumed = vacuum(self.db)
        if self.local_copies is None:
            return vacuumed
        try:
            cleared = self.local_copies()
        except StoreError as exc:  # the forget stands; the copies are cleared next time
            log.warning("this machine's copies were not cleared after forgetting: %s", exc)
            cleared = False
        return vacuumed and cleared

    def _newest_version(self, conn: Conn, memory_id: str) -> str:
        """What the chain of `memory_id` says now, in words for the owner."""
        rows = conn.execute(
            self.dialect.sql(
                f"{VERSIONS} SELECT m.content, m.status FROM memories m "
                "JOIN versions v ON v.id = m.id ORDER BY m.created_at DESC, m.seq DESC LIMIT 1"
            ),
            (memory_id,),
        ).fetchall()
        if not rows:
            return "(it was forgotten)"
        content, status = rows[0]
        return str(content) if status in ("staged", "active") else f"{content} ({status})"

    # -- the outbox --------------------------------------------------------------------

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
