"""Timothy's log: libraries' warnings land in the log file, a retry loop's repeats do not
flood it, and Timothy's own lines are never held back."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from timothy.logs import QuietRepeats


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def record(msg: str, *args: object, name: str = "psycopg.pool") -> logging.LogRecord:
    return logging.LogRecord(name, logging.WARNING, __file__, 1, msg, args, None)


def test_a_retry_loop_logs_its_first_failure_then_one_line_per_window_with_a_count() -> None:
    clock = Clock()
    quiet = QuietRepeats(window=300.0, clock=clock)
    template = "error connecting in %r: %s"
    assert quiet.filter(record(template, "timothy-store", "connection refused"))
    for second in range(1, 8):
        clock.now += 10
        assert not quiet.filter(record(template, "timothy-store", f"refused {second}"))
    # Another message of the same library is not held back by the first one's window.
    assert quiet.filter(record("discarding broken connection: %s", "conn"))
    clock.now += 300
    later = record(template, "timothy-store", "still refused")
    assert quiet.filter(later)
    assert "7 more like this in the last 300 s" in later.getMessage()
    assert "still refused" in later.getMessage()
    clock.now += 1
    assert not quiet.filter(record(template, "timothy-store", "refused again"))


def test_library_warnings_go_to_the_log_file_quieted_and_never_to_stderr(tmp_path: Path) -> None:
    script = """
import logging
from timothy.logs import configure_logging
configure_logging()
pool = logging.getLogger("psycopg.pool")
for attempt in range(6):
    pool.warning("error connecting in %r: %s", "timothy-store", f"refused {attempt}")
pool.info("connection given by %r", "timothy-store")
logging.getLogger("psycopg").warning("a warning of psycopg itself")
own = logging.getLogger("timothy.store")
for attempt in range(3):
    own.warning("the memory server is out of reach: %s", attempt)
"""
    env = {**os.environ, "TIMOTHY_LOG_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # not Python's last-resort handler on stderr
    log = (tmp_path / "timothy.log").read_text(encoding="utf-8")
    assert log.count("error connecting in 'timothy-store'") == 1
    assert "refused 0" in log
    assert "connection given" not in log  # the pool's INFO lines are not even built
    assert "a warning of psycopg itself" in log
    assert log.count("the memory server is out of reach") == 3  # our own: never held


def test_a_handler_added_to_a_library_logger_stays_off_timothys_own(tmp_path: Path) -> None:
    # pytest's log capture adds its handler to every logger that does not propagate; with
    # one shared handler list, Timothy's own records reached that handler twice.
    script = """
import logging
from timothy.logs import configure_logging
configure_logging()
before = list(logging.getLogger("timothy").handlers)
logging.getLogger("psycopg").addHandler(logging.NullHandler())
assert logging.getLogger("timothy").handlers == before, logging.getLogger("timothy").handlers
assert logging.getLogger("app").handlers == before
"""
    env = {**os.environ, "TIMOTHY_LOG_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
