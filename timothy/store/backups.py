"""Backups the owner can restore: online copies of the store, verified, rotated, restorable.

A backup is made with SQLite's online backup API, so it is one consistent moment of the store
even while the app writes to it. Each copy is checked with `integrity_check` before it counts
(the backup copies the store page for page, so this is also the store's own integrity check at
that moment); a copy that fails is deleted, and the store is then checked to tell a damaged
store from a bad copy. Automatic backups go to the data folder's `backups/`: once a day
(`backup_if_due`, which the app calls at start), before every schema migration and before a
consolidation merges memories. Rotation keeps the newest backup of each of the 7 latest days
that have one and of each of the 4 latest weeks before those; backups made by hand
(`timothy backup`) are never rotated away.

Restoring checks the backup first (a Timothy database, not damaged, not from a newer
Timothy), copies it beside the store, and only then swaps it in; the file it replaces is kept
aside in the data folder with its log (`-wal`), never deleted.

For the app: `backup_if_due(store, now)` on a worker after start (it waits for the open-time
damage check, and never copies a damaged store); `list_backups(data)` for Settings > Backups;
`restore_open(store, file, now=...)` restores into the open store (it closes its connections,
swaps the file and opens the restored one; `aside_path` says beforehand where the replaced file
will be kept). `Store.on_damage`
tells when the banner should offer `list_backups(data)[0]`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import urllib.parse
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from timothy import paths
from timothy.errors import DamagedStoreError, DatabaseLockedError, InvalidInputError, StoreError
from timothy.store.backup_folder import (
    BackupFile,
    BackupReason,
    backup_files,
    backup_name,
    backups_dir,
    restore_advice,
)
from timothy.store.db import (
    SQLITE_HEADER,
    Database,
    first_problem,
    header_schema_version,
    make_folder,
    newer_message,
    read_header,
    scalar,
)
from timothy.store.forget import Redaction
from timothy.store.memories import MemoryRepository
from timothy.store.migrations import SCHEMA_VERSION

if TYPE_CHECKING:
    from timothy.store import Store

log = logging.getLogger(__name__)

KEEP_DAILY = 7
KEEP_WEEKLY = 4
DAILY_INTERVAL = timedelta(hours=20)  # "once a day", even when the app starts a bit earlier
_LOG_SUFFIXES = ("-wal", "-shm", "-journal")

__all__ = [
    "KEEP_DAILY",
    "KEEP_WEEKLY",
    "RESTORING",
    "Backup",
    "BackupFile",
    "BackupReason",
    "PurgeReport",
    "RestoreResult",
    "aside_path",
    "backup_before_merge",
    "backup_before_migration",
    "backup_if_due",
    "list_backups",
    "make_backup",
    "newest_sound_backup",
    "problem_with",
    "purge",
    "restore",
    "restore_open",
    "rotate",
]


@dataclass(frozen=True, slots=True)
class Backup:
    """One backup as the owner sees it: where, when, why, and what it holds."""

    path: Path
    made_at: datetime
    reason: BackupReason
    size: int  # bytes
    memories: int | None  # None when the file cannot be read
    active: int | None


@dataclass(frozen=True, slots=True)
class RestoreResult:
    restored_from: Path
    database: Path
    kept_aside: Path | None  # the file that was replaced (None when there was none)
    memories: int


# -- making one ------------------------------------------------------------------------


def _fsync(path: Path) -> None:
    """Flush a file (or a folder's entries) to disk; a folder cannot be on every system."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _partial_path(folder: Path) -> Path:
    return folder / f".partial-{uuid.uuid4().hex}.db"


def _remove_with_logs(path: Path) -> None:
    for suffix in ("", *_LOG_SUFFIXES):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _copy_into(db: Database, target: Path) -> None:
    """An online backup of `db` into the new file `target`, made self-contained (no log),
    then checked with integrity_check; raises StoreError and leaves no file when it fails."""
    try:
        # Its own connection: a caller's open transaction (and its uncommitted changes)
        # stays out of the copy.
        source = db.read_only_connection()
        try:
            dest = apsw.Connection(str(target))
            try:
                # One step: the whole store copied in one read transaction (WAL lets writers
                # go on meanwhile), so the copy is one consistent moment of the store.
                with dest.backup("main", source, "main") as copy:
                    copy.step(-1)
                try:
                    dest.execute("PRAGMA journal_mode = DELETE")
                    problems = [str(row[0]) for row in dest.execute("PRAGMA integrity_check(10)")]
                except (apsw.CorruptError, apsw.NotADBError) as exc:
                    problems = [str(exc)]
            finally:
                dest.close()
        finally:
            source.close()
    except apsw.Error as exc:
        _remove_with_logs(target)
        raise StoreError(f"The backup to {target} failed: {exc}; no backup was made.") from exc
    except BaseException:
        _remove_with_logs(target)
        raise
    if problems != ["ok"]:
        _remove_with_logs(target)
        # The copy is the store page for page: tell a damaged store from a bad copy.
        damage = db.quick_check() or db.integrity_check()
        if damage is not None:
            raise db.damaged_error()
        raise StoreError(
            f"The backup to {target} did not pass its integrity check "
            f"({first_problem(problems)}); it was deleted."
        )
    _fsync(target)


def make_backup(
    store: Store,
    target: Path | None = None,
    *,
    now: datetime,
    reason: BackupReason = BackupReason.MANUAL,
) -> Path:
    """Back the store up to `target` (default: a new file in the data folder's `backups/`),
    verified; returns where it went. Refuses a damaged store and never overwrites a file."""
    return _backup_database(store.db, target, now=now, reason=reason)


def _backup_database(
    db: Database, target: Path | None, *, now: datetime, reason: BackupReason
) -> Path:
    if db.wait_for_check() is not None:
        raise DamagedStoreError(
            f"The memory database {db.path} is damaged, so it was not backed up (a backup of "
            f"it would be damaged too); {restore_advice(db.path)}."
        )
    if target is None:
        target = _new_backup_path(backups_dir(db.path), now, reason)
    else:
        target = target.expanduser()
        if target.exists():
            raise InvalidInputError(f"{target} already exists; choose a new file for the backup.")
        if not target.parent.is_dir():
            raise InvalidInputError(f"Cannot write {target}: {target.parent} is not a folder.")
    partial = _partial_path(target.parent)
    _copy_into(db, partial)
    try:
        os.replace(partial, target)
    except OSError as exc:
        _remove_with_logs(partial)
        raise StoreError(f"Cannot write {target}: {exc.strerror}.") from exc
    _fsync(target.parent)
    log.info("backed up %s to %s (%s)", db.path, target, reason.value)
    return target


def _new_backup_path(folder: Path, now: datetime, reason: BackupReason) -> Path:
    make_folder(folder)
    extra = 0
    while (folder / backup_name(now, reason, extra)).exists():
        extra += 1
    return folder / backup_name(now, reason, extra)


def backup_if_due(store: Store, now: datetime) -> Path | None:
    """The daily backup: made when no backup in `backups/` is less than a day old (20 hours,
    so a morning start after a later one the day before still makes one), then rotation.
    Returns the new backup, or None when none was due."""
    folder = backups_dir(store.path)
    found = backup_files(folder)
    if found and now - found[0].made_at < DAILY_INTERVAL:
        return None
    made = make_backup(store, now=now, reason=BackupReason.DAILY)
    rotate(folder, now=now)
    return made


def backup_before_merge(store: Store, now: datetime) -> Path:
    """The backup consolidation makes before it merges memories (then rotation)."""
    made = make_backup(store, now=now, reason=BackupReason.MERGE)
    rotate(backups_dir(store.path), now=now)
    return made


def backup_before_migration(db: Database, version: int, target: int, now: datetime) -> Path:
    """The backup made before a newer Timothy changes the schema of an existing store."""
    made = _backup_database(db, None, now=now, reason=BackupReason.MIGRATION)
    log.info("backed up %s (schema %d) before migrating it to %d", db.path, version, target)
    return made


# -- rotation --------------------------------------------------------------------------


def kept(found: list[BackupFile]) -> set[Path]:
    """Which backups the 7 daily + 4 weekly rule keeps: the newest of each of the 7 latest
    days (UTC) that have a backup, then the newest of each of the 4 latest ISO weeks among
    the backups older than those days. Backups made by hand are always kept."""
    keep = {b.path for b in found if not b.rotated}
    rotated = sorted((b for b in found if b.rotated), key=lambda b: b.made_at, reverse=True)
    days: list[date] = []
    oldest_day = None
    for backup in rotated:
        day = backup.made_at.date()
        if day in days:
            continue
        if len(days) == KEEP_DAILY:
            break
        days.append(day)
        oldest_day = day
        keep.add(backup.path)
    weeks: list[tuple[int, int]] = []
    for backup in rotated:
        if oldest_day is None or backup.made_at.date() >= oldest_day:
            continue
        iso = backup.made_at.isocalendar()
        week = (iso.year, iso.week)
        if week in weeks:
            continue
        if len(weeks) == KEEP_WEEKLY:
            break
        weeks.append(week)
        keep.add(backup.path)
    return keep


def rotate(folder: Path, *, now: datetime) -> list[Path]:
    """Delete the automatic backups the rule no longer keeps; returns what was deleted.
    Backups dated after `now` (a clock set back) are kept and not counted."""
    found = [b for b in backup_files(folder) if b.made_at <= now]
    keep = kept(found)
    removed = []
    for backup in found:
        if backup.path not in keep:
            try:
                backup.path.unlink()
            except OSError as exc:
                log.warning("could not delete old backup %s: %s", backup.path, exc)
                continue
            removed.append(backup.path)
    if removed:
        log.info("rotated away %d old backups in %s", len(removed), folder)
    return removed


# -- listing ---------------------------------------------------------------------------


def _open_read_only(path: Path) -> apsw.Connection:
    """A connection that cannot change the file (nor create a log beside it)."""
    return apsw.Connection(
        f"file:{urllib.parse.quote(path.resolve().as_posix())}?immutable=1",
        flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI,
    )


def _counts(path: Path) -> tuple[int | None, int | None]:
    try:
        conn = _open_read_only(path)
        try:
            total = int(scalar(conn, "SELECT count(*) FROM memories"))
            active = int(scalar(conn, "SELECT count(*) FROM memories WHERE status = 'active'"))
        finally:
            conn.close()
    except apsw.Error:
        return None, None
    return total, active


def list_backups(data: Path) -> list[Backup]:
    """The backups in a data folder's `backups/`, newest first, with how many memories each
    holds (for the app's Settings > Backups and `timothy backup --list`)."""
    found = []
    for backup in backup_files(backups_dir(paths.database_path(data))):
        try:
            size = backup.path.stat().st_size
        except OSError:
            continue
        total, active = _counts(backup.path)
        found.append(Backup(backup.path, backup.made_at, backup.reason, size, total, active))
    return found


# -- restoring -------------------------------------------------------------------------


def problem_with(path: Path) -> str | None:
    """Why a backup cannot be restored (damaged, newer, not a Timothy store), in the words
    restoring would use, or None when it can be: the whole file is checked, read only."""
    try:
        _check_backup(path)
        conn = _open_read_only(path)
        try:
            if int(scalar(conn, "PRAGMA user_version")) > SCHEMA_VERSION:
                _check_backup(path)  # the header lags behind: say it as restore would
            problems = [str(row[0]) for row in conn.execute("PRAGMA integrity_check(10)")]
            if problems != ["ok"]:
                return (
                    f"{path} is damaged ({first_problem(problems)}); "
                    "nothing was restored: choose an older backup."
                )
            tables = {str(row[0]) for row in conn.execute("SELECT name FROM sqlite_schema")}
        finally:
            conn.close()
    except InvalidInputError as exc:
        return str(exc)
    except apsw.Error as exc:
        return f"{path} is damaged ({exc}); nothing was restored: choose an older backup."
    if "memories" not in tables:
        return f"{path} is not a Timothy database (it holds no memories table)."
    return None


def newest_sound_backup(data: Path) -> Backup | None:
    """The newest backup in a data folder that passes `problem_with` (the damage banner's
    "Restore latest good backup"), or None when none does."""
    for backup in list_backups(data):
        problem = problem_with(backup.path)
        if problem is None:
            return backup
        log.warning("backup %s cannot be restored: %s", backup.path, problem)
    return None


def _check_backup(path: Path) -> None:
    """Refuse at once a file that is plainly not a Timothy database this version can read
    (its header says so); reads its first 100 bytes only."""
    if not path.is_file():
        raise InvalidInputError(f"{path} is not a file; nothing was restored.")
    header = read_header(path)
    if not header.startswith(SQLITE_HEADER):
        raise InvalidInputError(f"{path} is not a Timothy database; nothing was restored.")
    if header_schema_version(header) > SCHEMA_VERSION:
        raise InvalidInputError(
            newer_message(path, header_schema_version(header), SCHEMA_VERSION).replace(
                "the file was left untouched", "nothing was restored"
            )
        )


def _verify_copy(copy: Path, source: Path) -> int:
    """The copy about to replace the store: not newer, sound, a Timothy store; its count."""
    try:
        conn = apsw.Connection(str(copy))
        try:
            version = int(scalar(conn, "PRAGMA user_version"))
            if version > SCHEMA_VERSION:
                raise InvalidInputError(
                    newer_message(source, version, SCHEMA_VERSION).replace(
                        "the file was left untouched", "nothing was restored"
                    )
                )
            problems = [str(row[0]) for row in conn.execute("PRAGMA integrity_check(10)")]
            if problems != ["ok"]:
                raise InvalidInputError(
                    f"{source} is damaged ({first_problem(problems)}); "
                    "nothing was restored: choose an older backup."
                )
            tables = {str(row[0]) for row in conn.execute("SELECT name FROM sqlite_schema")}
            if "memories" not in tables:
                raise InvalidInputError(
                    f"{source} is not a Timothy database (it holds no memories table); "
                    "nothing was restored."
                )
            memories = int(scalar(conn, "SELECT count(*) FROM memories"))
            # Our store runs in WAL mode; the copy becomes one, with its log folded in.
            conn.execute("PRAGMA journal_mode = WAL")
        finally:
            conn.close()
    except (apsw.CorruptError, apsw.NotADBError) as exc:
        raise InvalidInputError(
            f"{source} is damaged ({exc}); nothing was restored: choose an older backup."
        ) from exc
    except apsw.Error as exc:
        raise StoreError(f"Cannot read {source}: {exc}; nothing was restored.") from exc
    return memories


def _refuse_if_in_use(database: Path) -> None:
    """Refuse to swap the store while any program has it open (the app, another command).

    An exclusive lock is asked for on a connection that can change nothing: it fails while
    any other connection is open, and the file (damaged or not) is not written to.
    """
    if not database.exists():
        return
    try:
        conn = apsw.Connection(str(database), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
            conn.execute("PRAGMA locking_mode = EXCLUSIVE")
            conn.execute("SELECT 1 FROM sqlite_schema LIMIT 1").fetchall()
        finally:
            conn.close()
    except (apsw.BusyError, apsw.LockedError) as exc:
        raise DatabaseLockedError(
            f"The memory database {database} is in use (is Timothy open?); close Timothy "
            "and try again. Nothing was restored."
        ) from exc
    except apsw.Error:
        pass  # a damaged file may fail to read: the lock was ours, so nobody else has it


def _aside_path(database: Path, now: datetime) -> Path:
    stamp = now.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")
    extra = 0
    while True:
        name = f"{database.name}.before-restore-{stamp}{f'-{extra}' if extra else ''}"
        aside = database.with_name(name)
        if not any(Path(f"{aside}{s}").exists() for s in ("", *_LOG_SUFFIXES)):
            return aside
        extra += 1


def _swap_in(copy: Path, database: Path, now: datetime) -> Path | None:
    """Move the store and its log aside together, then the copy into its place; on failure,
    put everything back as it was."""
    moved: list[tuple[Path, Path]] = []
    aside = _aside_path(database, now) if database.exists() else None
    try:
        for suffix in ("", *_LOG_SUFFIXES):
            current = Path(f"{database}{suffix}")
            if current.exists():
                # With no database, a stray log belongs to nothing: it must not meet the copy.
                target = (
                    Path(f"{aside}{suffix}")
                    if aside is not None
                    else Path(f"{database}.stray-{uuid.uuid4().hex}{suffix}")
                )
                os.replace(current, target)
                moved.append((current, target))
        os.replace(copy, database)
    except OSError:
        for current, target in reversed(moved):
            with contextlib.suppress(OSError):
                os.replace(target, current)
        raise
    _fsync(database.parent)
    return aside


RESTORING = (
    "Your memories are being restored from a backup; this takes a moment. Try again when "
    "it has finished."
)


def _prepared_copy(database: Path, source: Path) -> tuple[Path, int]:
    """The backup copied beside the store and checked (not damaged, not newer, a Timothy
    store); the copy and how many memories it holds. The caller removes the copy."""
    with contextlib.suppress(OSError):
        if source.resolve() == database.resolve():
            raise InvalidInputError(f"{source} is the memory database itself; nothing to do.")
    _check_backup(source)
    make_folder(database.parent)
    copy = database.parent / f".restore-{uuid.uuid4().hex}.db"
    try:
        shutil.copyfile(source, copy)
        log_file = Path(f"{source}-wal")
        if log_file.is_file() and log_file.stat().st_size > 0:
            shutil.copyfile(log_file, Path(f"{copy}-wal"))  # committed work not yet folded in
        memories = _verify_copy(copy, source)
        _fsync(copy)
    except OSError as exc:
        _remove_with_logs(copy)
        raise StoreError(
            f"Restoring {source} failed: {exc.strerror or exc}; the current store was kept."
        ) from exc
    except BaseException:
        _remove_with_logs(copy)
        raise
    return copy, memories


def _put_in_place(copy: Path, source: Path, database: Path, now: datetime) -> Path | None:
    try:
        _refuse_if_in_use(database)
        return _swap_in(copy, database, now)
    except OSError as exc:
        raise StoreError(
            f"Restoring {source} failed: {exc.strerror or exc}; the current store was kept."
        ) from exc


def aside_path(database: Path, now: datetime) -> Path:
    """Where restoring at `now` keeps the file it replaces (what the app's question names)."""
    return _aside_path(database, now)


def restore(data: Path, backup: Path, *, now: datetime) -> RestoreResult:
    """Replace the store in the data folder `data` with `backup`.

    The store must be closed (in every program). The backup is checked on a copy first; the
    current file and its log move aside together as `timothy.db.before-restore-<time>`
    (with `-wal`), so it stays a whole database the owner can still open. Nothing is
    deleted, and the backup file itself is only read.
    """
    database = paths.database_path(data)
    source = backup.expanduser()
    copy, memories = _prepared_copy(database, source)
    try:
        aside = _put_in_place(copy, source, database, now)
    finally:
        _remove_with_logs(copy)
    log.info("restored %s from %s; the old file is %s", database, source, aside)
    return RestoreResult(source, database, aside, memories)


def restore_open(store: Store, backup: Path, *, now: datetime) -> RestoreResult:
    """Restore `backup` into a store this program has open (the app's Settings > Backups).

    The backup is copied and checked while the store stays open, so a damaged or newer
    backup is refused with nothing closed. Then the store's connections close (any thread
    asking for one meanwhile is told `RESTORING`), the file is swapped as `restore` does,
    and the store opens the restored file (or, when the swap failed, the file it had) and
    drops what it kept in memory of the old one. Another program holding the file open
    makes it refuse, with the current store kept.
    """
    database = store.path
    source = backup.expanduser()
    copy, memories = _prepared_copy(database, source)
    try:
        with store.db.closed_for(RESTORING):
            aside = _put_in_place(copy, source, database, now)
    except DatabaseLockedError as exc:  # "close Timothy" would be no help from inside it
        raise DatabaseLockedError(
            f"The memory database {database} is still in use (by another program, or by "
            "work in Timothy that is still reading it); try again in a moment. Nothing was "
            "restored."
        ) from exc
    finally:
        _remove_with_logs(copy)
        store.reopened()
    log.info("restored %s from %s while open; the old file is %s", database, source, aside)
    return RestoreResult(source, database, aside, memories)


# -- purging forgotten memories --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PurgeReport:
    """What purging forgotten memories from the backups did."""

    purged: tuple[Path, ...]  # backups that held some of them and no longer do
    memories: int  # memory rows removed, across those backups
    unchanged: int  # backups that held none of them
    failed: tuple[tuple[Path, str], ...]  # backups that could not be purged, and why

    def to_json(self) -> dict[str, Any]:
        return {
            "purged": [str(path) for path in self.purged],
            "memories": self.memories,
            "unchanged": self.unchanged,
            "failed": [{"path": str(path), "reason": why} for path, why in self.failed],
        }


def backups_holding(folder: Path, memory_ids: Iterable[str]) -> list[Path]:
    """The backups in `folder` that hold any of these memories (read only; a backup that
    cannot be read counts as holding them: it cannot be shown not to)."""
    ids = json.dumps(list(dict.fromkeys(memory_ids)))
    found = []
    for backup in backup_files(folder):
        try:
            conn = _open_read_only(backup.path)
            try:
                held = scalar(
                    conn,
                    "SELECT 1 FROM memories WHERE id IN (SELECT value FROM json_each(?)) LIMIT 1",
                    (ids,),
                )
            finally:
                conn.close()
        except apsw.Error:
            held = True
        if held:
            found.append(backup.path)
    return found


def _purge_one(path: Path, memory_ids: list[str], chain: bool, redaction: Redaction) -> int:
    """Forget the memories in one backup: on a copy opened as a store (migrated there when
    it is older, with no backup of its own), then folded back into one self-contained file,
    checked with integrity_check, and swapped in for the backup. Returns the rows removed."""
    copy = path.with_name(f".purge-{uuid.uuid4().hex}.db")
    try:
        shutil.copyfile(path, copy)
        log_file = Path(f"{path}-wal")
        if log_file.is_file() and log_file.stat().st_size > 0:
            shutil.copyfile(log_file, Path(f"{copy}-wal"))
        db = Database(copy, check="now")
        try:
            if db.damaged:
                raise db.damaged_error()
            repository = MemoryRepository(db)
            with db.read() as conn:
                present = [
                    str(row[0])
                    for row in conn.execute(
                        "SELECT id FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                        (json.dumps(memory_ids),),
                    )
                ]
            removed = 0
            if present:
                report = repository.forget(present, chain=chain, redaction=redaction)
                if not report.compacted:
                    raise StoreError(f"the copy of {path} could not be rebuilt")
                removed = report.count
        finally:
            db.close()
        conn = apsw.Connection(str(copy))
        try:
            conn.execute("PRAGMA journal_mode = DELETE")
            problems = [str(row[0]) for row in conn.execute("PRAGMA integrity_check(10)")]
        finally:
            conn.close()
        if problems != ["ok"]:
            raise StoreError(
                f"the purged copy of {path} did not pass its integrity check "
                f"({first_problem(problems)})"
            )
        for suffix in _LOG_SUFFIXES:
            if Path(f"{copy}{suffix}").exists():
                raise StoreError(f"the purged copy of {path} kept a {suffix} file")
        _fsync(copy)
        os.replace(copy, path)
        for suffix in _LOG_SUFFIXES:  # a log of the old file must never meet the new one
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        _fsync(path.parent)
    finally:
        _remove_with_logs(copy)
    return removed


def purge(
    folder: Path, memory_ids: Iterable[str], *, chain: bool = False, redaction: Redaction
) -> PurgeReport:
    """Forget memories (with `chain`, each one's whole version chain as the backup holds
    it) in every backup in `folder` that holds them, with the same redaction, secure
    deletion and rebuild as forgetting in the store. Each backup is changed on a copy, which
    must pass integrity_check before it atomically replaces the backup; a backup that
    cannot be purged (damaged, from a newer Timothy, the disk full) is left exactly as it
    was and named in the report. A backup older than this Timothy is migrated on the copy
    (it is restored the same way either way), without a backup of its own."""
    ids = list(dict.fromkeys(memory_ids))
    if not ids:
        raise InvalidInputError("Name at least one memory to purge from the backups.")
    purged: list[Path] = []
    failed: list[tuple[Path, str]] = []
    removed = 0
    holding = backups_holding(folder, ids)
    for path in holding:
        try:
            count = _purge_one(path, ids, chain, redaction)
        except (StoreError, OSError, apsw.Error) as exc:
            reason = str(exc) if isinstance(exc, StoreError) else f"{type(exc).__name__}: {exc}"
            log.warning("could not purge %s: %s", path, reason)
            failed.append((path, reason))
            continue
        removed += count
        purged.append(path)
    unchanged = len(backup_files(folder)) - len(holding)
    log.info("purged %d memories from %d backups in %s", removed, len(purged), folder)
    return PurgeReport(tuple(purged), removed, unchanged, tuple(failed))
