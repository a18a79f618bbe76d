"""What every subcommand shares: options, the data folder, the store, output and errors."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from timothy import paths
from timothy.errors import InvalidInputError
from timothy.settings import load_settings
from timothy.store import DamageCheck, Store
from timothy.store.backup_folder import restore_advice
from timothy.store.engine import StoreEngine
from timothy.store.location import open_store
from timothy.store.records import parse_given_time, utc_now


def common_options() -> argparse.ArgumentParser:
    """Options accepted before or after any subcommand."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir",
        metavar="DIR",
        default=argparse.SUPPRESS,
        help="use this data folder instead of the usual one (also: TIMOTHY_DATA_DIR)",
    )
    common.add_argument(
        "--store",
        metavar="URL",
        default=argparse.SUPPRESS,
        help=(
            "use the shared memory on this PostgreSQL server (postgresql://user@host/db) "
            "instead of the data folder's file (also: TIMOTHY_STORE_URL)"
        ),
    )
    common.add_argument(
        "--verbose", action="store_true", default=argparse.SUPPRESS, help="log to stderr too"
    )
    return common


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def add_now(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--now", metavar="ISO", help="act as if it were this moment (ISO 8601; default: now)"
    )


class Context:
    """One command's run: parsed arguments, a lazily opened store, stdout and stderr."""

    def __init__(
        self, args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None
    ) -> None:
        self.args = args
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self._store: StoreEngine | None = None
        self.read_damaged = False  # a read ran on a damaged store: the command exits 1

    @property
    def data_override(self) -> Path | None:
        value = getattr(self.args, "data_dir", None)
        return Path(value).expanduser() if value else None

    @property
    def data_dir(self) -> Path:
        return paths.data_dir(self.data_override)

    @property
    def store_override(self) -> str | None:
        value = getattr(self.args, "store", None)
        return str(value) if value else None

    def store(self, *, writes: bool = False) -> StoreEngine:
        """The store: the shared server `--store`, TIMOTHY_STORE_URL or the settings name,
        else the data folder's file, checked for damage before it is used (quick_check:
        ~0.2 s at 10k memories, ~1 s at 100k). A command that `writes` is refused at once on
        a damaged file; one that reads goes on after a warning (what can still be read may
        help, as an export does), and exits 1."""
        if self._store is None:
            self._store = open_store(
                self.store_override,
                data_dir=self.data_dir,
                settings=load_settings().store,
                check=DamageCheck.NOW,
                follow_changes=False,
            )
        store = self._store
        if isinstance(store, Store) and store.damaged:
            if writes:
                raise store.db.damaged_error()
            if not self.read_damaged:
                self.read_damaged = True
                self.fail(
                    f"warning: {store.path} is damaged, so what follows may be incomplete "
                    f"and nothing will be written to it; {restore_advice(store.path)}."
                )
        return store

    def now(self) -> datetime:
        value = getattr(self.args, "now", None)
        if not value:
            return utc_now()
        try:
            return parse_given_time(value)
        except ValueError:
            raise InvalidInputError(
                "--now needs an ISO 8601 time from 1970 to 9998 such as 2026-01-31T09:00:00Z, "
                f"not {value!r}."
            ) from None

    @property
    def json(self) -> bool:
        return bool(getattr(self.args, "json", False))

    def print(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def print_json(self, value: Any) -> None:
        self.out.write(json.dumps(value, ensure_ascii=False) + "\n")

    def fail(self, message: str) -> None:
        self.err.write(f"timothy: {message}\n")

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
