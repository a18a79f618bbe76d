"""numpy loads on the first use of the vector work, not when the modules that name it load.

Each case runs in a fresh interpreter: the test process itself has long imported numpy."""

from __future__ import annotations

import json
import subprocess
import sys

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
