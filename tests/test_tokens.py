"""tiktoken's o200k_base loads from the shipped file with the network blocked."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from timothy import tokens

# Runs in a fresh interpreter: any socket use raises, then the encoding is loaded and used.
CHILD = """
import socket
def refuse(*a, **k):
    raise OSError("network blocked by the test")
socket.socket.connect = refuse
socket.getaddrinfo = refuse
socket.create_connection = refuse
from timothy import tokens
enc = tokens.encoding()
assert enc.name == "o200k_base", enc.name
print(tokens.count_tokens("hello world"), enc.decode(enc.encode("Zoë 🍣")))
"""


def _network_isolated(command: list[str]) -> list[str]:
    """Also cut the network at the kernel where this machine allows it (a new net namespace)."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode == 0:
        return [unshare, "-rn", *command]
    return command


def test_encoding_loads_offline_into_a_fresh_cache(tmp_path: Path) -> None:
    cache = tmp_path / "fresh-cache"
    env = {
        **os.environ,
        "TIMOTHY_CACHE_DIR": str(cache),
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "elsewhere"),
        "PYTHONPATH": str(REPO),
    }
    result = subprocess.run(
        _network_isolated([sys.executable, "-c", CHILD]),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split(maxsplit=1) == ["2", "Zoë 🍣\n"]
    cached = list((cache / "tiktoken").iterdir())
    assert [p.name for p in cached] == ["fb374d419588a4632f3f557e76b4b70aebbca790"]
    assert cached[0].stat().st_size == 3_613_922


def test_special_token_lookalikes_count_as_text() -> None:
    assert tokens.count_tokens("<|endoftext|>") > 1


# Loads the encoding in a fresh interpreter and prints what it makes of a mixed sample, and
# whether tiktoken read the shipped file (its cache folder is only touched then).
SAMPLE_CHILD = """
import os, sys
from timothy import tokens
enc = tokens.encoding()
sample = "Zoë's 3 trains, naïve 🍣 <|endoftext|> def f(x):\\n    return x**2  # ok\\n" * 3
print(enc.encode(sample, allowed_special="all"))
print(enc.decode(enc.encode(sample, disallowed_special=())) == sample)
print(os.path.isdir(os.path.join(os.environ["TIMOTHY_CACHE_DIR"], "tiktoken")))
"""


def _load_in_child(cache: Path) -> list[str]:
    env = {**os.environ, "TIMOTHY_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-c", SAMPLE_CHILD], capture_output=True, text=True, env=env, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_the_compact_copy_of_the_ranks_encodes_as_tiktoken_does(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _load_in_child(cache)  # reads the shipped file through tiktoken, keeps the copy
    assert first[1:] == ["True", "True"]
    assert (cache / "tokens" / tokens.RANKS_COPY).is_file()
    shutil.rmtree(cache / "tiktoken")
    second = _load_in_child(cache)  # from the copy: tiktoken's cache is not even made
    assert second == [first[0], "True", "False"]


def test_a_damaged_copy_is_ignored(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _load_in_child(cache)
    copy = cache / "tokens" / tokens.RANKS_COPY
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte: the checksum no longer matches
    copy.write_bytes(bytes(data))
    shutil.rmtree(cache / "tiktoken")
    again = _load_in_child(cache)
    assert again == [first[0], "True", "True"]  # read from the shipped file again
    assert copy.read_bytes() != bytes(data)  # and the copy made anew


def test_copies_an_earlier_timothy_kept_are_removed_when_the_new_one_is_made(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "cache" / "tokens"
    folder.mkdir(parents=True)
    old_list = folder / f"{tokens.ENCODING_NAME}-{tokens.ENCODING_SHA256[:16]}.ranks"
    other_file = folder / f"{tokens.ENCODING_NAME}-0123456789abcdef.rankmap"
    unrelated = folder / "notes.txt"
    for path in (old_list, other_file, unrelated):
        path.write_bytes(b"kept by an earlier version")
    _load_in_child(tmp_path / "cache")
    assert sorted(p.name for p in folder.iterdir()) == sorted([tokens.RANKS_COPY, "notes.txt"])
