"""A new owner's first start: vector search is on, with the offline embedder, and the memories
already there are embedded in the background while the window is usable."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from tests.app.conftest import WindowFactory, settle
from tests.app.many_memories import add_many
from timothy.providers.local import MODEL_ID
from timothy.settings import load_settings, settings_path
from timothy.store import MemoryStatus, Store


def test_a_first_run_embeds_with_the_local_model_in_the_background(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    add_many(store, 40)
    proposal = store.memories.stage("The owner's niece is called Inês")
    assert not settings_path().exists()  # nothing chosen yet: this is the first run
    settings = load_settings()
    assert settings.embedding_provider == "local"

    window = make_window(settings=settings)
    qtbot.waitUntil(lambda: store.vectors.active_model() is not None, timeout=60_000)
    qtbot.waitUntil(lambda: not window.jobs.busy, timeout=60_000)
    settle(qtbot, window.workers, window.network)

    model = store.vectors.active_model()
    assert model is not None and model.name == MODEL_ID
    active = store.memories.count(status=MemoryStatus.ACTIVE)
    assert store.vectors.count(model) == active
    assert store.vectors.missing(model) == []
    assert store.vectors.get(proposal.id, model) is None  # embedded once confirmed
    assert window.banner.text_label.text().startswith("Vector search now uses")
    qtbot.waitUntil(
        lambda: window.status.embedding_label.text().startswith("Vector search:"), timeout=5000
    )
