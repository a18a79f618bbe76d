"""Finding an OpenAI-compatible model server already running on this computer (Ollama, LM Studio),
so a first run can offer it with one click. Runs on a worker; a closed port costs a few ms.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)

KNOWN_SERVERS: tuple[tuple[str, int], ...] = (("Ollama", 11434), ("LM Studio", 1234))
PROBE_TIMEOUT_SECONDS = 0.6


@dataclass(frozen=True, slots=True)
class LocalServer:
    name: str
    base_url: str  # the OpenAI-compatible root, ending in /v1
    models: tuple[str, ...]


def probe(name: str, port: int, host: str = "127.0.0.1") -> LocalServer | None:
    # Here, not with the module: urllib.request brings http.client, email and ssl (~35 ms),
    # which the window's start does not need; probes run on a worker.
    import urllib.error
    import urllib.request

    base_url = f"http://{host}:{port}/v1"
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=PROBE_TIMEOUT_SECONDS) as reply:
            data = json.loads(reply.read(1_000_000).decode("utf-8"))
    except (OSError, ValueError, urllib.error.URLError):
        return None
    models: list[str] = []
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        for entry in data["data"]:
            if isinstance(entry, dict) and isinstance(entry.get("id"), str):
                models.append(entry["id"])
    log.info("found %s at %s with %d models", name, base_url, len(models))
    return LocalServer(name, base_url, tuple(models))


def find_local_servers(
    candidates: tuple[tuple[str, int], ...] = KNOWN_SERVERS, host: str = "127.0.0.1"
) -> list[LocalServer]:
    """The servers that answer, in the order given (only those that list at least one model
    are useful, but an empty one is still reported so the owner can load a model)."""
    return [server for name, port in candidates if (server := probe(name, port, host))]
