"""Where backups live and what they are called: the data folder's `backups/`, one file each.

A backup's name says when it was made (UTC) and why, e.g.
`timothy-20261201T093000Z-daily.db`; files with any other name are not Timothy's backups and
are never listed, rotated or deleted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path

BACKUPS_DIRNAME = "backups"
_STAMP = "%Y%m%dT%H%M%SZ"
_NAME = re.compile(r"^timothy-(?P<stamp>\d{8}T\d{6}Z)-(?P<reason>[a-z]+)(?:-(?P<extra>\d+))?\.db$")


class BackupReason(StrEnum):
    DAILY = "daily"  # the app's start-up backup, once a day
    MIGRATION = "migration"  # before the schema was changed by a newer Timothy
    MERGE = "merge"  # before consolidation merged near-duplicates
    MANUAL = "manual"  # `timothy backup` with no file: never rotated away


@dataclass(frozen=True, slots=True)
class BackupFile:
    path: Path
    made_at: datetime  # UTC, to the second
    reason: BackupReason

    @property
    def rotated(self) -> bool:
        """Kept only as long as the 7 daily + 4 weekly rule keeps it (manual ones stay)."""
        return self.reason is not BackupReason.MANUAL


def backups_dir(database: Path) -> Path:
    """The backups folder beside a database file (the data folder's `backups/`)."""
    return database.parent / BACKUPS_DIRNAME


def backup_name(made_at: datetime, reason: BackupReason, extra: int = 0) -> str:
    stamp = made_at.astimezone(UTC).strftime(_STAMP)
    return f"timothy-{stamp}-{reason.value}{f'-{extra}' if extra else ''}.db"


def parse_backup(path: Path) -> BackupFile | None:
    """The backup a file name describes, or None when it is not one of Timothy's."""
    found = _NAME.match(path.name)
    if found is None:
        return None
    try:
        reason = BackupReason(found["reason"])
        made_at = datetime.strptime(found["stamp"], _STAMP).replace(tzinfo=UTC)
    except ValueError:
        return None
    return BackupFile(path, made_at, reason)


def backup_files(folder: Path) -> list[BackupFile]:
    """Timothy's backups in `folder`, newest first (none when the folder does not exist)."""
    try:
        entries = list(folder.iterdir())
    except FileNotFoundError:
        return []
    found = [b for b in (parse_backup(p) for p in entries if p.is_file()) if b is not None]
    found.sort(key=lambda b: (b.made_at, b.path.name), reverse=True)
    return found


def latest_backup(database: Path) -> Path | None:
    found = backup_files(backups_dir(database))
    return found[0].path if found else None


def restore_advice(database: Path) -> str:
    """How to get a sound store back: the latest backup's restore command, or, with none,
    how to save what can still be read."""
    latest = latest_backup(database)
    if latest is not None:
        return f"restore the latest backup with `timothy restore {latest}`"
    return (
        "there is no backup of it yet, so save what can still be read with "
        "`timothy memories export FILE`"
    )


def damaged_message(database: Path) -> str:
    """The one sentence every refused write says: which file, and how to get it back."""
    return (
        f"The memory database {database} is damaged, so nothing was written to it; "
        f"{restore_advice(database)}."
    )
