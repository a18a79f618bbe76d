"""numpy loads on the first use of the vector work, not when the modules that name it load.

Each case runs in a fresh interpreter: the test process itself has long imported numpy."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from timothy.lazy import lazy_pattern

CHILD = """
import json, sys
from timothy.cli import main
import timothy.assistant, timothy.store.postgres, timothy.store.transfer
import timothy.memory.consolidation, timothy.memory.near_duplicates
import timothy.providers.local, timothy.retrieval.floor
out = {"imported": "numpy" in sys.modules}
try:
    main(["--help"])
except SystemExit:
    pass
out["help"] = "numpy" in sys.modules
from timothy.store import vec_storage
vector = vec_storage.from_blob(b"\\x00\\x00\\x80\\x3f\\x00\\x00\\x00\\x40")
out["used"] = "numpy" in sys.modules
import numpy
out["vector"] = vector.tolist()
out["real"] = vec_storage.np.float32 is numpy.float32 and vector.dtype == numpy.float32
print(json.dumps(out))
"""


def test_numpy_loads_on_the_first_vector_read_not_on_import() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {
        "imported": False,
        "help": False,
        "used": True,
        "vector": [1.0, 2.0],
        "real": True,
    }


RACE = """
import sys, threading
from timothy.lazy import import_lock, lazy_module
np = lazy_module("numpy")
read = threading.Event()
found = []
def first_read():
    read.set()
    found.append(np.float32)
with import_lock:  # another thread's first import (onnxruntime's, say) is under way
    reader = threading.Thread(target=first_read)
    reader.start()
    read.wait(10)
    reader.join(0.3)
    print("waited" if reader.is_alive() and "numpy" not in sys.modules else "did not wait")
reader.join(30)
print("read" if found and found[0].__name__ == "float32" else "not read")
"""


def test_a_first_read_waits_for_another_threads_import() -> None:
    """Two threads importing numpy's parts at once can see it half made: a lazy first read
    waits while another import holds the lock."""
    done = subprocess.run([sys.executable, "-c", RACE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["waited", "read"]


def test_a_lazy_pattern_answers_as_the_compiled_one() -> None:
    text = "Remember: Ana moved to Porto on 3 May 2024.\nREMEMBER Ana"
    lazy = lazy_pattern(r"remember\W+(?P<who>\w+)", re.IGNORECASE)
    plain = re.compile(r"remember\W+(?P<who>\w+)", re.IGNORECASE)
    assert [m.group("who") for m in lazy.finditer(text)] == ["Ana", "Ana"]
    assert lazy.sub("*", text) == plain.sub("*", text)
    assert lazy.findall(text) == plain.findall(text)
    assert lazy.split(text) == plain.split(text)
    assert lazy.subn("*", text) == plain.subn("*", text)
    assert lazy.match("remember   bo").group("who") == "bo"  # type: ignore[union-attr]
    assert lazy.fullmatch("nothing") is None
    assert (lazy.pattern, lazy.flags, lazy.groups, dict(lazy.groupindex)) == (
        plain.pattern,
        plain.flags,
        plain.groups,
        dict(plain.groupindex),
    )


def test_a_lazy_pattern_is_compiled_at_its_first_use() -> None:
    """A broken pattern fails where it is used, as re.error, not when its module loads."""
    broken = lazy_pattern(r"(unclosed")
    with pytest.raises(re.error):
        broken.search("unclosed")
    with pytest.raises(re.error):  # still broken at the next use
        broken.sub("", "unclosed")
    with pytest.raises(AttributeError):
        lazy_pattern("fine").no_such_method  # type: ignore[attr-defined]  # noqa: B018


COMPILES = """
import json, re, sys
import timothy.text, timothy.lazy, timothy.retrieval.fusion, timothy.retrieval.settings
compiled = []
plain = re._compile
OURS = ("timothy.memory.provenance", "timothy.memory.dates", "timothy.retrieval.when")
def counting(pattern, flags):
    caller = sys._getframe(1)
    while caller is not None and caller.f_globals.get("__name__", "") in ("re", "timothy.lazy"):
        caller = caller.f_back
    if caller is not None and caller.f_globals.get("__name__") in OURS:
        compiled.append(str(pattern)[:40])
    return plain(pattern, flags)
re._compile = counting
import timothy.memory.provenance, timothy.memory.dates, timothy.retrieval.when
on_import = list(compiled)
from datetime import date
from timothy.memory.dates import absolutise
written = absolutise("We met yesterday.", date(2026, 5, 4))
print(json.dumps({"on_import": on_import, "used": len(compiled) > 0, "written": written}))
"""


def test_the_memory_modules_compile_their_patterns_when_first_used() -> None:
    """Provenance, dates and time expressions hold ~60 patterns that only a saved fact, an
    extraction or a question naming a day uses: none is compiled while the window's start
    imports them."""
    done = subprocess.run(
        [sys.executable, "-c", COMPILES], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["on_import"] == []
    assert found["used"] is True
    assert found["written"] == "We met on Sunday, 3 May 2026."
