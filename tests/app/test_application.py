"""The window's start imports only what the window needs before it is shown.

Keyring's backends, Pygments' lexer machinery, the `sqlite_vec` package (whose `__init__`
imports numpy), numpy itself (the store's vector work names it through `timothy.lazy`),
urllib's HTTP client and package metadata load later, on the worker that first needs them,
and still work there: the key is read from the keyring, a code block is coloured, a vector
search answers.
Each case runs in a fresh interpreter, started the way the launcher starts the window."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from timothy import secrets
from timothy.store import Store

CHILD = """
import json, sys, threading
from app.launcher import before_qt
warming = before_qt()
from app.application import QApplication, MainWindow, load_settings, open_store, paths
from app.jobs.workers import Workers
app = QApplication(sys.argv[:1])
store = open_store(data_dir=paths.data_dir(None), settings=load_settings().store)
window = MainWindow(store, warm_up_code=True)
warming.join()
window.show()
# Before any event is handled: what the window's start itself imported (the start-up loads
# begin only once the window's first reads have come back to this thread).
LATER = (
    "keyring", "pygments.lexer", "pygments.lexers", "sqlite_vec", "urllib.request",
    "importlib.metadata", "numpy",
)
shown = {name: name in sys.modules for name in LATER}

out = {}
def on_worker():
    from app.transcript.code_highlighter import lex, lexer_named
    from timothy import secrets
    out["key"] = secrets.get_secret(secrets.OPENAI_API_KEY)
    lexer, tokens = lex("def f():\\n    return 1\\n", lexer_named("python"), False)
    out["lexer"] = lexer.name if lexer is not None else None
    out["kinds"] = sorted({str(kind) for _, kind, _ in tokens})
    model = store.vectors.active_model()
    out["nearest"] = [found for found, _ in store.vectors.nearest(model, [1.0, 0.0, 0.0], 2)]
worker = threading.Thread(target=on_worker)
worker.start()
worker.join()
window.close()
store.close()
print(json.dumps({"shown": shown, **out}))
"""


def test_the_shown_window_has_not_loaded_what_workers_load_later(
    data_dir: Path, tmp_path: Path
) -> None:
    secrets.set_secret(secrets.OPENAI_API_KEY, "sk-from-the-keyring")
    with Store.open(data_dir) as store:
        ids = [store.memories.add(text).id for text in ("east", "north")]
        model = store.vectors.ensure_model("test/3", 3)
        store.vectors.set_active_model(model.name)
        store.vectors.put_many(model, [(ids[0], [1.0, 0.0, 0.0]), (ids[1], [0.0, 1.0, 0.0])])
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["shown"] == {
        "keyring": False,
        "pygments.lexer": False,
        "pygments.lexers": False,
        "sqlite_vec": False,
        "urllib.request": False,  # the local servers' probe's, on a worker
        "importlib.metadata": False,  # the About box's
        "numpy": False,  # the vector work's (search, embedding, migrations), on a worker
    }
    assert found["key"] == "sk-from-the-keyring"
    assert found["lexer"] == "Python"
    assert "Token.Keyword" in found["kinds"]
    assert found["nearest"] == ids


SWITCHING = """
import sys
from app.launcher import before_qt
warming = before_qt()
while_importing = sys.getswitchinterval()
from app.application import run_app
code = run_app(None, warming=warming)
print(code, while_importing, sys.getswitchinterval())
"""


def test_threads_take_short_turns_once_the_window_is_up(data_dir: Path) -> None:
    """The window's imports run with Python's usual 5 ms turns (a warm-up thread beside
    them); from the window's show on, a busy worker gives the GIL back to the GUI thread
    after 1 ms."""
    done = subprocess.run(
        [sys.executable, "-c", SWITCHING],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TIMOTHY_QUIT_AFTER_MS": "300", "QT_QPA_PLATFORM": "offscreen"},
    )
    assert done.returncode == 0, done.stderr
    code, while_importing, shown = done.stdout.strip().splitlines()[-1].split()
    assert code == "0"
    assert float(while_importing) == 0.005
    assert float(shown) == 0.001
