"""OpenAI chat and embeddings, through the real `openai` SDK, against the fake server."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.fakes.openai_server import OpenAIServer
from tests.fakes.script import call
from tests.providers.common import FAST, REMEMBER, SYSTEM, openai_chat
from timothy.errors import ErrorKind, ProviderError
from timothy.providers.backoff import Backoff
from timothy.providers.base import (
    CancelToken,
    ChatMessage,
    Stop,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    Usage,
)
from timothy.providers.factory import chat_provider, embedding_provider
from timothy.providers.openai_chat import OpenAIChat
from timothy.providers.openai_embeddings import OpenAIEmbeddings
from timothy.secrets import OPENAI_API_KEY, set_secret
from timothy.settings import OpenAISettings, Settings

chat = openai_chat


def test_streams_text_then_tool_calls_then_usage_then_stop(openai_server: OpenAIServer) -> None:
    openai_server.reply(
        "Noted, saving that.",
        tool_calls=[call("remember", {"content": "prefers aisle seats"}, id="call_a")],
        usage=(120, 9, 100),
    )
    events = list(chat(openai_server).stream(SYSTEM, [ChatMessage("user", "aisle!")], [REMEMBER]))
    assert events == [
        TextDelta("Noted, "),
        TextDelta("saving "),
        TextDelta("that."),
        ToolCallEvent(ToolCall("call_a", "remember", '{"content": "prefers aisle seats"}')),
        Usage(input_tokens=120, output_tokens=9, cached_tokens=100),
        Stop("tool_use"),
    ]
    sent = openai_server.chat_requests[-1]
    assert sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}
    # one system message: the stable prefix first, byte for byte, then the memory block
    assert sent["messages"][0] == {
        "role": "system",
        "content": "You are Timothy.\n\n<memory>…</memory>",
    }
    assert sent["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "remember",
                "description": REMEMBER.description,
                "parameters": REMEMBER.parameters,
            },
        }
    ]


def test_a_tool_round_trip_sends_the_call_and_its_result(openai_server: OpenAIServer) -> None:
    provider = chat(openai_server)
    openai_server.reply(tool_calls=[call("remember", {"content": "aisle"}, id="call_1")])
    openai_server.reply("Saved.")
    first = list(provider.stream(SYSTEM, [ChatMessage("user", "remember aisle")], [REMEMBER]))
    tool_call = next(e.call for e in first if isinstance(e, ToolCallEvent))
    history = [
        ChatMessage("user", "remember aisle"),
        ChatMessage("assistant", "", tool_calls=(tool_call,)),
        ChatMessage("tool", "saved as 01J…", tool_call_id=tool_call.id),
    ]
    second = list(provider.stream(SYSTEM, history, [REMEMBER]))
    assert [e for e in second if isinstance(e, TextDelta)] == [TextDelta("Saved.")]
    assert second[-1] == Stop("end_turn")
    messages = openai_server.chat_requests[-1]["messages"]
    assert messages[2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "remember", "arguments": '{"content": "aisle"}'},
            }
        ],
    }
    assert messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": "saved as 01J…"}


def test_tool_calls_sent_whole_and_unnumbered_are_parsed_too(openai_server: OpenAIServer) -> None:
    openai_server.whole_tool_calls = True
    openai_server.reply(
        tool_calls=[
            call("remember", {"content": "a"}, id="c1"),
            call("recall", {"q": "b"}, id="c2"),
        ]
    )
    events = list(chat(openai_server).stream([], [ChatMessage("user", "hi")], [REMEMBER]))
    assert [e.call for e in events if isinstance(e, ToolCallEvent)] == [
        ToolCall("c1", "remember", '{"content": "a"}'),
        ToolCall("c2", "recall", '{"q": "b"}'),
    ]


def test_complete_returns_the_text_and_limits_tokens(openai_server: OpenAIServer) -> None:
    openai_server.reply("A short title")
    text = chat(openai_server).complete(SYSTEM, [ChatMessage("user", "title?")], max_tokens=20)
    assert text == "A short title"
    sent = openai_server.chat_requests[-1]
    assert "stream" not in sent or sent["stream"] is False
    assert sent["max_tokens"] == 20  # a compatible server; OpenAI itself gets max_completion_tokens


def test_cancelled_before_start_sends_nothing(openai_server: OpenAIServer) -> None:
    cancel = CancelToken()
    cancel.cancel()
    assert list(chat(openai_server).stream(SYSTEM, [ChatMessage("user", "x")], cancel=cancel)) == [
        Stop("cancelled")
    ]
    assert openai_server.requests == []


def test_a_keyless_local_server_works_and_gets_no_real_key(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key-must-stay-home")
    provider = chat_provider(Settings(chat_provider="openai", openai=openai_server.settings()))
    assert provider is not None
    assert provider.complete([], [ChatMessage("user", "hi")]) == "Hello from the fake server."
    sent = openai_server.requests[-1].headers.get("authorization", "")
    assert "sk-real-openai-key" not in sent


def test_the_keyring_key_is_sent(openai_server: OpenAIServer) -> None:
    openai_server.api_key = "sk-test-from-keyring"
    settings = Settings(chat_provider="openai", openai=openai_server.settings())
    provider = chat_provider(settings)
    assert provider is not None
    with pytest.raises(ProviderError) as refused:
        provider.complete([], [ChatMessage("user", "hi")])
    assert refused.value.kind is ErrorKind.AUTH
    set_secret(OPENAI_API_KEY, "sk-test-from-keyring")
    provider = chat_provider(settings)
    assert provider is not None
    assert provider.complete([], [ChatMessage("user", "hi")]) == "Hello from the fake server."


def test_another_servers_key_is_read_from_the_keyring_with_the_first_request(
    openai_server: OpenAIServer,
) -> None:
    openai_server.api_key = "sk-test-later"
    settings = Settings(chat_provider="openai", openai=openai_server.settings())
    provider = chat_provider(settings)  # no key stored yet: none read now
    assert provider is not None
    set_secret(OPENAI_API_KEY, "sk-test-later")
    assert provider.complete([], [ChatMessage("user", "hi")]) == "Hello from the fake server."
    assert openai_server.requests[-1].headers["authorization"] == "Bearer sk-test-later"


def test_a_typed_key_overrides_the_keyring_for_a_check(openai_server: OpenAIServer) -> None:
    """The settings page tests a key the owner typed before saving it."""
    from timothy.providers.checks import check_chat

    openai_server.api_key = "sk-test-typed"
    set_secret(OPENAI_API_KEY, "sk-test-old-saved")
    settings = Settings(chat_provider="openai", openai=openai_server.settings())
    refused = check_chat(settings)
    assert not refused.ok and "key" in refused.message.lower()
    accepted = check_chat(settings, openai_key="sk-test-typed")
    assert accepted.ok, accepted.message
    assert openai_server.requests[-1].headers["authorization"] == "Bearer sk-test-typed"


def test_openai_itself_without_a_key_is_a_plain_error_before_any_request() -> None:
    with pytest.raises(ProviderError) as missing:
        chat_provider(Settings(chat_provider="openai", openai=OpenAISettings()))
    assert missing.value.kind is ErrorKind.AUTH
    assert "No OpenAI API key is set" in str(missing.value)


def test_the_sdk_is_imported_by_the_first_request_not_the_providers_build(
    openai_server: OpenAIServer,
) -> None:
    """Building the providers (as the app's start does) leaves the openai SDK unimported;
    the first request imports it and goes through the real `openai.OpenAI` client. A fresh
    interpreter: this one imported the SDK long ago."""
    script = f"""
import sys
from timothy.providers.openai_chat import OpenAIChat
from timothy.providers.openai_embeddings import OpenAIEmbeddings
from timothy.providers.settings import OpenAISettings
settings = OpenAISettings(base_url={openai_server.base_url!r}, chat_model="gpt-4o-mini",
                          embedding_model="text-embedding-3-small")
chat = OpenAIChat(settings)
embeddings = OpenAIEmbeddings(settings)
assert "openai" not in sys.modules and "pydantic" not in sys.modules, "imported at build"
from timothy.providers.factory import chat_provider
from timothy.settings import Settings
built = chat_provider(Settings(chat_provider="openai", openai=settings))
assert built is not None and "keyring" not in sys.modules, "the keyring read at build"
print(chat.complete([], []))
import openai
assert isinstance(chat._client.get(), openai.OpenAI)
"""
    openai_server.reply("Hello from the server.")
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Hello from the server."


def test_the_sdks_types_are_imported_as_they_are_named_and_every_name_is_still_there(
    openai_server: OpenAIServer,
) -> None:
    """A streamed reply with a tool call, embeddings and the model list go through the real
    client while the SDK's types Timothy never uses (the Responses API's) stay unimported,
    and every name the SDK's packages offer is still there when asked for. A fresh
    interpreter: this one imported the SDK long ago."""
    script = f"""
import json, sys
from timothy.providers.base import ChatMessage, SystemBlock, ToolSpec
from timothy.providers.model_list import list_chat_models
from timothy.providers.openai_chat import OpenAIChat
from timothy.providers.openai_embeddings import OpenAIEmbeddings
from timothy.providers.settings import OpenAISettings
settings = OpenAISettings(base_url={openai_server.base_url!r}, chat_model="gpt-4o-mini",
                          embedding_model="text-embedding-3-small")
tool = ToolSpec("remember", "Save a fact.", {{"type": "object", "properties": {{}}}})
asked = [ChatMessage("user", "hi")]
events = list(OpenAIChat(settings).stream([SystemBlock("system")], asked, [tool]))
print(json.dumps([type(event).__name__ for event in events]))
print(len(OpenAIEmbeddings(settings).embed(["tea"])[0]))
print(len(list_chat_models(settings, None)) > 0)
print("openai.types.responses.response" in sys.modules)
import openai
from openai.types import Batch, CreateEmbeddingResponse
from openai.types.chat import ChatCompletionChunk
assert openai.types.responses.Response.__name__ == "Response"
assert openai.types.chat.ChatCompletion.__name__ == "ChatCompletion"
assert Batch.__name__ == "Batch" and ChatCompletionChunk.__name__ == "ChatCompletionChunk"
assert not hasattr(openai.types, "NoSuchType")
star = {{}}
exec("from openai.types.audio import *", star)  # a package nothing had asked for yet
assert "Transcription" in star and "TranscriptionCreateParams" in star
print(sum(name.startswith("openai.types.responses") for name in sys.modules) > 100)
"""
    openai_server.reply("Noted.", tool_calls=[call("remember", {"content": "tea"}, id="c1")])
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 0, result.stderr
    events, dimension, listed, responses_before, responses_after = (
        result.stdout.strip().splitlines()
    )
    assert json.loads(events) == ["TextDelta", "ToolCallEvent", "Usage", "Stop"]
    assert dimension == "1536" and listed == "True"
    assert responses_before == "False"  # the Responses API's ~130 models were never made
    assert responses_after == "True"  # and are all there once named


# -- embeddings -------------------------------------------------------------------------


def test_embeddings_come_back_in_order_with_the_model_dimension(
    openai_server: OpenAIServer,
) -> None:
    embedder = OpenAIEmbeddings(openai_server.settings(), backoff=FAST)
    assert embedder.model_id == "openai/text-embedding-3-small"
    assert embedder.dimension == 1536
    vectors = embedder.embed(["aisle seats", "birthday cake", "aisle seat"])
    assert [len(v) for v in vectors] == [1536, 1536, 1536]
    sent = openai_server.embedding_requests[-1]
    assert sent["input"] == ["aisle seats", "birthday cake", "aisle seat"]
    assert sent["model"] == "text-embedding-3-small"
    assert sent["encoding_format"] == "float"
    assert "dimensions" not in sent

    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cosine(vectors[0], vectors[2]) > cosine(vectors[0], vectors[1])  # order kept
    assert embedder.embed_query("aisle seats") == vectors[0]


def test_embeddings_are_batched(openai_server: OpenAIServer) -> None:
    embedder = OpenAIEmbeddings(openai_server.settings(), backoff=FAST)
    vectors = embedder.embed([f"fact number {i}" for i in range(300)])
    assert len(vectors) == 300
    assert [len(r["input"]) for r in openai_server.embedding_requests] == [128, 128, 44]


def test_shortened_vectors_are_a_model_of_their_own(openai_server: OpenAIServer) -> None:
    embedder = OpenAIEmbeddings(
        openai_server.settings(embedding_model="text-embedding-3-large", embedding_dimension=256)
    )
    assert embedder.model_id == "openai/text-embedding-3-large@256"
    assert len(embedder.embed_query("hello")) == 256 == embedder.dimension
    assert openai_server.embedding_requests[-1]["dimensions"] == 256


def test_an_unknown_compatible_model_is_asked_its_dimension_once(
    openai_server: OpenAIServer,
) -> None:
    openai_server.embedding_models["nomic-embed-text"] = 768
    embedder = OpenAIEmbeddings(openai_server.settings(embedding_model="nomic-embed-text"))
    assert embedder.model_id == "openai/nomic-embed-text"
    assert embedder.dimension == 768
    assert embedder.dimension == 768
    assert len(openai_server.embedding_requests) == 1


def test_a_server_without_embeddings_says_so(openai_server: OpenAIServer) -> None:
    openai_server.embeddings_enabled = False
    embedder = embedding_provider(
        Settings(embedding_provider="openai", openai=openai_server.settings())
    )
    assert embedder is not None
    with pytest.raises(ProviderError) as absent:
        embedder.embed(["x"])
    assert absent.value.kind is ErrorKind.MODEL_NOT_FOUND
    assert "offers no embeddings" in str(absent.value)


# -- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "code", "kind", "words"),
    [
        (401, None, ErrorKind.AUTH, "refused the API key"),
        (403, None, ErrorKind.ACCESS_DENIED, "denies this account access to the model"),
        (403, "unsupported_country_region_territory", ErrorKind.ACCESS_DENIED, "country"),
        (404, None, ErrorKind.MODEL_NOT_FOUND, "does not know the model 'gpt-4o-mini'"),
        (429, "insufficient_quota", ErrorKind.QUOTA, "out of credit"),
        (400, "context_length_exceeded", ErrorKind.CONTEXT_TOO_LONG, "too long for the model"),
        (400, None, ErrorKind.BAD_REQUEST, "refused the request as invalid"),
        (409, None, ErrorKind.UNKNOWN, "unexpected error (HTTP 409)"),
    ],
)
def test_each_error_status_gets_a_plain_message(
    openai_server: OpenAIServer, status: int, code: str | None, kind: ErrorKind, words: str
) -> None:
    openai_server.fail(status, code=code)
    with pytest.raises(ProviderError) as failed:
        chat(openai_server).complete([], [ChatMessage("user", "hi")])
    assert failed.value.kind is kind
    assert words in failed.value.message
    assert failed.value.detail and str(status) in failed.value.detail
    assert len(openai_server.requests) == 1  # none of these is worth a retry


def test_server_errors_are_retried_and_can_recover(openai_server: OpenAIServer) -> None:
    openai_server.fail(500, times=2)
    openai_server.reply("Back again.")
    assert chat(openai_server).complete([], [ChatMessage("user", "hi")]) == "Back again."
    assert len(openai_server.requests) == 3


def test_throttling_is_retried_then_given_up_within_its_bound(
    openai_server: OpenAIServer,
) -> None:
    openai_server.fail(429, times=None)
    provider = chat(openai_server)
    provider._backoff = Backoff(first_delay=0.05, max_delay=0.2, total_seconds=1.0, max_attempts=50)
    started = time.monotonic()
    with pytest.raises(ProviderError) as throttled:
        provider.complete([], [ChatMessage("user", "hi")])
    elapsed = time.monotonic() - started
    assert throttled.value.kind is ErrorKind.THROTTLED
    assert "rate-limiting" in throttled.value.message
    assert "gave up after" in throttled.value.message
    assert len(openai_server.requests) >= 3  # it did retry
    assert elapsed < 1.0 + 1.0  # stopped at its bound (plus the last request), not after 50 tries


def test_throttling_honours_retry_after_within_the_bound(openai_server: OpenAIServer) -> None:
    openai_server.fail(429, retry_after=5)
    provider = chat(openai_server)
    provider._backoff = Backoff(first_delay=0.01, total_seconds=1.0)
    started = time.monotonic()
    with pytest.raises(ProviderError) as throttled:
        provider.complete([], [ChatMessage("user", "hi")])
    # waiting the 5 s asked for would cross the 1 s bound: give up now instead
    assert throttled.value.kind is ErrorKind.THROTTLED
    assert time.monotonic() - started < 1.0
    assert len(openai_server.requests) == 1


def test_a_throttled_stream_is_retried_before_its_first_event(
    openai_server: OpenAIServer,
) -> None:
    openai_server.fail(429, times=2)
    openai_server.reply("Finally.")
    events = list(chat(openai_server).stream([], [ChatMessage("user", "hi")]))
    assert events[0] == TextDelta("Finally.")
    assert len(openai_server.requests) == 3


def test_an_unreachable_server_is_named(openai_server: OpenAIServer) -> None:
    url = openai_server.base_url
    openai_server.stop()
    provider = OpenAIChat(OpenAISettings(base_url=url, timeout_seconds=2), backoff=FAST)
    with pytest.raises(ProviderError) as down:
        provider.complete([], [ChatMessage("user", "hi")])
    assert down.value.kind is ErrorKind.UNREACHABLE
    assert down.value.message == f"Could not reach the server at {url}; is it running?"


def test_an_error_mid_stream_is_a_provider_error(openai_server: OpenAIServer) -> None:
    openai_server.fail_midstream("server_error", text="Partial answer", message="boom")
    stream = chat(openai_server).stream([], [ChatMessage("user", "hi")])
    assert next(stream) == TextDelta("Partial ")
    with pytest.raises(ProviderError):
        list(stream)


def test_the_vendor_detail_goes_to_the_log_but_never_the_key(
    openai_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    key = "sk-secret-0123456789abcdef"
    set_secret(OPENAI_API_KEY, key)
    openai_server.fail(401, message=f"Incorrect API key provided: {key}.")
    provider = chat_provider(Settings(chat_provider="openai", openai=openai_server.settings()))
    assert provider is not None
    with caplog.at_level(logging.WARNING), pytest.raises(ProviderError) as refused:
        provider.complete([], [ChatMessage("user", "hi")])
    assert "Incorrect API key provided" in caplog.text
    assert key not in caplog.text
    assert key not in (refused.value.detail or "")
    assert key not in str(refused.value)


# -- the wrong address: what a first-time owner types ------------------------------------


def test_an_address_without_v1_is_not_blamed_on_the_model(openai_server: OpenAIServer) -> None:
    # Ollama at http://localhost:11434 (no /v1) answers 404 with no word of any model
    provider = OpenAIChat(
        OpenAISettings(base_url=openai_server.url, timeout_seconds=5), backoff=FAST
    )
    with pytest.raises(ProviderError) as wrong:
        list(provider.stream([], [ChatMessage("user", "hi")]))
    assert wrong.value.kind is ErrorKind.NOT_CONFIGURED
    assert "does not know the model" not in wrong.value.message
    assert "no chat API at that address" in wrong.value.message
    assert "/v1" in wrong.value.message
    assert len(openai_server.requests) == 1  # a wrong address is not retried


@pytest.mark.parametrize(
    "words",
    [
        'model "llama9" not found, try pulling it first',  # Ollama, for a model not pulled
        "Model not found.",  # a server that does not repeat the name
    ],
)
def test_a_model_the_server_lacks_is_still_named(openai_server: OpenAIServer, words: str) -> None:
    openai_server.fail(404, code="", message=words)
    with pytest.raises(ProviderError) as missing:
        chat(openai_server, chat_model="llama9").complete([], [ChatMessage("user", "hi")])
    assert missing.value.kind is ErrorKind.MODEL_NOT_FOUND
    assert "does not know the model 'llama9'" in missing.value.message


@pytest.mark.parametrize("status", [200, 405, 501])
def test_a_web_page_at_the_address_says_it_is_not_the_api(
    openai_server: OpenAIServer, status: int
) -> None:
    openai_server.web_page = status
    provider = chat(openai_server)
    for attempt in (
        lambda: list(provider.stream([], [ChatMessage("user", "hi")])),
        lambda: provider.complete([], [ChatMessage("user", "hi")]),
    ):
        with pytest.raises(ProviderError) as page:
            attempt()
        assert page.value.kind is ErrorKind.NOT_CONFIGURED
        assert "not" in page.value.message and "OpenAI-compatible API" in page.value.message
        assert "Check the server address" in page.value.message
    assert len(openai_server.requests) == 2  # not retried as if the server were busy


def test_a_web_page_answering_embeddings_says_it_is_not_the_api(
    openai_server: OpenAIServer,
) -> None:
    openai_server.web_page = 200
    embedder = embedding_provider(
        Settings(embedding_provider="openai", openai=openai_server.settings())
    )
    assert embedder is not None
    with pytest.raises(ProviderError) as page:
        embedder.embed(["x"])
    assert page.value.kind is ErrorKind.NOT_CONFIGURED
    assert "web page" in page.value.message


def test_https_to_a_plain_http_server_says_to_try_http(openai_server: OpenAIServer) -> None:
    url = openai_server.base_url.replace("http://", "https://")
    provider = OpenAIChat(OpenAISettings(base_url=url, timeout_seconds=5), backoff=FAST)
    with pytest.raises(ProviderError) as tls:
        provider.complete([], [ChatMessage("user", "hi")])
    assert tls.value.kind is ErrorKind.UNREACHABLE
    assert "is it running?" not in tls.value.message  # it is: it just speaks plain http
    assert "http:// instead of https://" in tls.value.message


# -- a keyring that cannot be read ------------------------------------------------------


@pytest.fixture
def locked_keyring(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    import keyring

    from tests.fakes.keyring_backend import LockedKeyring

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(LockedKeyring())
    try:
        yield
    finally:
        keyring.set_keyring(previous)


def test_a_locked_keyring_is_not_reported_as_no_key(locked_keyring: None) -> None:
    with pytest.raises(ProviderError) as unread:  # OpenAI's own API: its key read at build
        chat_provider(Settings(chat_provider="openai"))
    assert unread.value.kind is ErrorKind.AUTH
    assert "No OpenAI API key is set" not in unread.value.message
    assert "could not be read" in unread.value.message and "locked" in unread.value.message


def test_a_locked_keyring_does_not_stop_a_local_server(
    locked_keyring: None, openai_server: OpenAIServer
) -> None:
    provider = chat_provider(Settings(chat_provider="openai", openai=openai_server.settings()))
    assert provider is not None
    assert provider.complete([], [ChatMessage("user", "hi")]) == "Hello from the fake server."
    assert openai_server.requests[-1].headers["authorization"] == "Bearer no-key"


def test_with_a_locked_keyring_the_environment_key_still_works(
    locked_keyring: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from timothy.providers.openai_client import api_key

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-from-the-environment")
    assert api_key(OpenAISettings()) == "sk-test-from-the-environment"


def test_a_servers_key_locked_away_at_the_first_request_is_used_once_unlocked(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import keyring

    from tests.fakes.keyring_backend import LockableKeyring
    from timothy.providers.openai_client import KEY_REREAD_SECONDS, LazyClient, stored_key

    secret = "sk-test-for-a-hosted-compatible-server"
    openai_server.api_key = secret  # a hosted OpenAI-compatible server: it needs the key
    set_secret(OPENAI_API_KEY, secret)
    backend = LockableKeyring(locked=True)
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    try:
        provider = chat_provider(Settings(chat_provider="openai", openai=openai_server.settings()))
        assert isinstance(provider, OpenAIChat)
        now = [1000.0]
        provider._client = LazyClient(
            openai_server.settings(), None, read_key=stored_key, clock=lambda: now[0]
        )
        provider._backoff = FAST
        with pytest.raises(ProviderError) as refused:  # sent without a key meanwhile
            provider.complete([], [ChatMessage("user", "hi")])
        assert refused.value.kind is ErrorKind.AUTH
        assert "keyring is locked" in refused.value.message  # not "check the key in Settings"
        backend.locked = False  # the owner unlocks the keyring
        now[0] += KEY_REREAD_SECONDS / 2  # not read at every request: a read may prompt
        reads = backend.reads
        with pytest.raises(ProviderError):
            provider.complete([], [ChatMessage("user", "hi")])
        assert backend.reads == reads
        now[0] += KEY_REREAD_SECONDS
        assert provider.complete([], [ChatMessage("user", "hi")]) == "Hello from the fake server."
        assert openai_server.requests[-1].headers["authorization"] == f"Bearer {secret}"
        reads = backend.reads
        now[0] += 10 * KEY_REREAD_SECONDS  # read: no more reads
        provider.complete([], [ChatMessage("user", "hi")])
        assert backend.reads == reads
    finally:
        keyring.set_keyring(previous)
