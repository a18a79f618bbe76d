"""The app's running assistant: the chat engine and the embedding queue, built from the
owner's settings and rebuilt whenever they change.

The core builds it (`timothy.assistant.build`, as `timothy chat` does). Building reads the
keyring and may ask an embedding server its dimension, so it runs on a worker; the result
is swapped in on the GUI thread. The engine's background work
(extraction, titles, compaction) reports from its own threads; those events are re-emitted
as signals, which Qt delivers on the GUI thread.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import time

from PySide6.QtCore import QObject, Signal

from app.conversations.store_conversations import NO_CHAT_MODEL, StoreConversations
from app.jobs.workers import Failure, Workers
from timothy.assistant import EmbeddingState, Setup, build, embedding_state, warm_embedder
from timothy.chat.engine import ChatEngine
from timothy.chat.events import BackgroundEvent, FactsProposed, SessionCompacted, TitleChanged
from timothy.memory.embedding import EmbeddingQueue
from timothy.providers.base import ChatProvider, EmbeddingProvider
from timothy.secrets import OPENAI_API_KEY, read_secret
from timothy.settings import Settings
from timothy.store.engine import StoreEngine

log = logging.getLogger(__name__)

QUEUE_STOP_SECONDS = 2.0
# The least time between tries of a locked keyring the owner did not ask for (the window
# came to the front, a message was sent): a locked keyring may put up its own unlock prompt,
# which must not come back every time the window is focused.
KEYRING_RETRY_SECONDS = 30.0


class Assistant(QObject):
    configured = Signal(object)  # Setup: a build finished and is in use
    embedding_changed = Signal(object)  # EmbeddingState, after a refresh
    facts_proposed = Signal(object)  # FactsProposed: extraction staged facts
    title_changed = Signal(object)  # TitleChanged: a conversation got its title
    session_compacted = Signal(object)  # SessionCompacted: older turns were summarised
    embedder_loaded = Signal()  # the local embedding model is loaded (after `configured`)
    # A build is in use and its local model (if any) has loaded or failed, or the build
    # failed: what the build loads holds the GIL at times, so start-up's later loads wait
    # for this (`app/mainwindow/start_loads.py`).
    settled = Signal()
    failed = Signal(str)
    # A try the owner asked for (`retry_keyring(asked=True)`) found the keyring still
    # unreadable: why, in plain words.
    keyring_still_locked = Signal(str)

    def __init__(
        self,
        store: StoreEngine,
        conversations: StoreConversations,
        workers: Workers,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = store
        self.conversations = conversations
        self.workers = workers
        self.engine: ChatEngine | None = None
        self.setup: Setup | None = None
        self.queue: EmbeddingQueue | None = None
        # Engines replaced while a turn may still be streaming on them: closed at the end.
        self._retired: list[ChatEngine] = []
        self._generation = 0
        # Counts checks of where vector search stands: only the newest one's answer is used
        # (one begun before a rebuild or a later check would put an old state back).
        self._embedding_checks = 0
        self._closed = False
        self._embedder_idle = threading.Event()  # clear while the local model loads
        self._embedder_idle.set()
        self._keyring_tried = 0.0  # time.monotonic() of the last read of a locked keyring
        self.keyring_retry_seconds = KEYRING_RETRY_SECONDS
        self._keyring_reading = False

    @property
    def chat(self) -> ChatProvider | None:
        return self.setup.chat if self.setup is not None else None

    @property
    def embedder(self) -> EmbeddingProvider | None:
        return self.setup.embedder if self.setup is not None else None

    def engines(self) -> list[ChatEngine]:
        """The engine in use and those it replaced (their last turns may still be running)."""
        return [*self._retired, *([self.engine] if self.engine is not None else [])]

    # -- building ----------------------------------------------------------------------

    def configure(self, settings: Settings) -> None:
        """Build for `settings` on a worker; the newest request wins."""
        self._generation += 1
        generation = self._generation
        store = self.store
        self.conversations.expect_engine()
        self.workers.run(
            self,
            # The local model loads after the engine is in use (`_load_embedder`): a turn
            # need not wait for it, and one that comes first loads it itself.
            lambda: build(store, settings, load_embedder=False),
            "setting up the chat model",
            on_success=lambda built: self._built(generation, built),
            on_failure=self._build_failed,
        )

    def _built(self, generation: int, built: tuple[ChatEngine, Setup]) -> None:
        engine, setup = built
        if generation != self._generation or self._closed:
            self._retire(engine)
            return
        if self.engine is not None:
            self._retire(self.engine)
        engine.background_listeners.append(self._heard)
        self.engine = engine
        self.setup = setup
        self._embedding_checks += 1  # a check begun with the old setup is out of date
        unavailable = setup.chat_problem or NO_CHAT_MODEL
        self.conversations.set_engine(engine, unavailable)
        if setup.keyring_locked:
            self._keyring_tried = time.monotonic()  # the build has just read it
        self._restart_queue(setup.embedder)
        self.configured.emit(setup)
        self._load_embedder(engine)

    def _load_embedder(self, engine: ChatEngine) -> None:
        query = engine.recaller.embedder
        if query is None:
            self.settled.emit()
            return
        idle = self._embedder_idle
        idle.clear()

        def load() -> None:
            try:
                warm_embedder(query)
            finally:
                idle.set()

        def loaded(_none: None) -> None:
            self.embedder_loaded.emit()
            self.settled.emit()

        self.workers.run(
            self,
            load,
            "loading the local embedding model",
            on_success=loaded,
            on_failure=lambda _failure: self.settled.emit(),
        )

    def wait_for_embedder(self, seconds: float) -> bool:
        """At quit: the model's loading (onnxruntime's native code, the one-time rewrite)
        cannot be interrupted, and a process that exits under it aborts. False: still
        loading after `seconds`."""
        return self._embedder_idle.wait(seconds)

    def _build_failed(self, failure: Failure) -> None:
        self.conversations.engine_settled()  # turns go on with the engine in use, if any
        self.failed.emit(failure.message)
        self.settled.emit()

    # -- a keyring that was locked ------------------------------------------------------

    def retry_keyring(self, *, asked: bool = False) -> bool:
        """Build again when the last build could not read the keyring and now it can: the
        owner unlocked it after the start, and nothing else would rebuild. `asked`: the
        owner clicked *Try again*, tried at once; otherwise (the window came to the front, a
        message was sent) at most once every `keyring_retry_seconds`. The read runs on a
        worker, and only a readable keyring costs a build. True: a try started."""
        setup = self.setup
        if setup is None or not setup.keyring_locked or self._keyring_reading or self._closed:
            return False
        now = time.monotonic()
        if not asked and now - self._keyring_tried < self.keyring_retry_seconds:
            return False
        self._keyring_tried = now
        self._keyring_reading = True
        generation = self._generation
        self.workers.run(
            self,
            _read_keyring,
            "reading the system keyring",
            on_success=lambda _key: self._keyring_readable(generation, setup.settings),
            on_failure=lambda failure: self._keyring_unreadable(asked, failure),
        )
        return True

    def _keyring_readable(self, generation: int, settings: Settings) -> None:
        self._keyring_reading = False
        if generation == self._generation and not self._closed:  # no newer build meanwhile
            log.info("the keyring can be read again: building the chat model")
            self.configure(settings)

    def _keyring_unreadable(self, asked: bool, failure: Failure) -> None:
        self._keyring_reading = False
        self._keyring_tried = time.monotonic()  # an unlock prompt may just have been refused
        if asked:
            self.keyring_still_locked.emit(failure.message)

    def _retire(self, engine: ChatEngine) -> None:
        # Not closed yet: a turn may still stream on it, and its last turn's extraction
        # still reports through the listener. Closed at quit.
        self._retired.append(engine)

    def _restart_queue(self, embedder: EmbeddingProvider | None) -> None:
        old, self.queue = self.queue, None
        if old is not None:
            # Stopping finishes what is queued, which may wait on the network.
            self.workers.run(self, lambda: old.stop(QUEUE_STOP_SECONDS), "stopping embeddings")
        if embedder is not None:
            self.queue = EmbeddingQueue(self.store, embedder).start()

    def refresh_embedding(self) -> None:
        """Re-read where vector search stands (after a backfill, or memories changed)."""
        if self.setup is None:
            return
        embedder = self.setup.embedder
        problem = self.setup.embedding.problem
        store = self.store
        self._embedding_checks += 1
        check = self._embedding_checks
        self.workers.run(
            self,
            lambda: embedding_state(store, embedder, problem),
            "checking vector search",
            on_success=lambda state: self._embedding_refreshed(check, state),
        )

    def _embedding_refreshed(self, check: int, state: EmbeddingState) -> None:
        setup = self.setup
        if setup is None or check != self._embedding_checks:
            return
        if state.active != setup.embedding.active and self.engine is not None:
            # The vector leg moved to another model: recall's query must be embedded with it.
            self.engine.recaller.embedder = (
                setup.embedder
                if setup.embedder is not None and setup.embedder.model_id == state.active
                else None
            )
        self.setup = dataclasses.replace(setup, embedding=state)
        self.embedding_changed.emit(state)

    # -- background events -------------------------------------------------------------

    def _heard(self, event: BackgroundEvent) -> None:
        """Called on the engine's threads: only emits (Qt queues it to the GUI thread)."""
        if isinstance(event, FactsProposed):
            self.facts_proposed.emit(event)
        elif isinstance(event, TitleChanged):
            self.title_changed.emit(event)
        elif isinstance(event, SessionCompacted):
            self.session_compacted.emit(event)

    # -- closing -----------------------------------------------------------------------

    def close(self) -> None:
        """At quit: stop embedding and the engines' background work (nothing waits long)."""
        self._closed = True
        if self.queue is not None:
            self.queue.stop(QUEUE_STOP_SECONDS)
            self.queue = None
        engines = self.engines()
        self._retired.clear()
        self.engine = None
        self.conversations.set_engine(None)
        for engine in engines:
            # Extraction still running on its thread must not report to a closed window.
            if self._heard in engine.background_listeners:
                engine.background_listeners.remove(self._heard)
            engine.close()
            engine.recaller.close()


def _read_keyring() -> None:
    """Read the key (on a worker) only to learn whether the keyring opens now; raises
    KeyringUnavailableError while it is still locked. The key itself is not passed on."""
    read_secret(OPENAI_API_KEY)
