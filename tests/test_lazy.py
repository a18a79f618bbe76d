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
