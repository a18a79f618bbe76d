"""What every chat provider does the same way, whatever its wire: cancelling, and giving up
on a server that does not answer. Each case runs against both fake servers, through the
real `openai` and `boto3` clients."""

from __future__ import annotations

import threading
import time

import pytest

from tests.providers.common import SYSTEM, ChatServer, chat_for
from timothy.errors import ErrorKind, ProviderError
from timothy.providers.base import CancelToken, ChatMessage, Stop, TextDelta


@pytest.fixture(params=["openai", "bedrock"])
def server(request: pytest.FixtureRequest) -> ChatServer:
    fake: ChatServer = request.getfixturevalue(f"{request.param}_server")
    return fake


def test_cancel_mid_stream_closes_the_connection_and_keeps_what_arrived(
    server: ChatServer,
) -> None:
    server.stall("one two three four", after=2)
    cancel = CancelToken()
    stream = chat_for(server).stream(SYSTEM, [ChatMessage("user", "count")], cancel=cancel)
    arrived = [next(stream), next(stream)]
    assert arrived == [TextDelta("one "), TextDelta("two ")]
    # the server now sends nothing; cancelling from another thread must cut the read short
    threading.Thread(target=cancel.cancel).start()
    assert list(stream) == [Stop("cancelled")]
    assert server.wait_for_disconnect(timeout=5)


def test_cancel_before_the_reply_begins_returns_at_once(server: ChatServer) -> None:
    server.hang()  # the model "thinks" and sends nothing, not even headers
    cancel = CancelToken()
    stream = chat_for(server, timeout_seconds=3).stream(
        SYSTEM, [ChatMessage("user", "think hard")], cancel=cancel
    )
    threading.Thread(target=lambda: server.wait_for_requests(1) and cancel.cancel()).start()
    assert list(stream) == [Stop("cancelled")]
    # returned while the request was still pending: it did not wait for the timeout
    assert not server.requests[-1].disconnected.is_set()
    # the abandoned request is closed in the background (here, by its read timeout)
    assert server.wait_for_disconnect(timeout=10)


def test_a_reply_arriving_after_cancel_is_discarded_and_its_connection_closed(
    server: ChatServer,
) -> None:
    server.stall("a reply that starts late", after=1, delay=0.5)
    cancel = CancelToken()
    stream = chat_for(server).stream(SYSTEM, [ChatMessage("user", "hi")], cancel=cancel)
    threading.Thread(target=lambda: server.wait_for_requests(1) and cancel.cancel()).start()
    assert list(stream) == [Stop("cancelled")]
    assert server.wait_for_disconnect(timeout=10)


def test_a_hanging_server_is_cut_off_by_the_timeout(server: ChatServer) -> None:
    server.hang()
    provider = chat_for(server, timeout_seconds=0.5)
    started = time.monotonic()
    with pytest.raises(ProviderError) as slow:
        list(provider.stream([], [ChatMessage("user", "hi")]))
    assert slow.value.kind is ErrorKind.TIMEOUT
    assert "within 0.5 s" in slow.value.message
    assert time.monotonic() - started < 3
    assert server.wait_for_disconnect(timeout=5)


def test_a_hanging_complete_is_cut_off_by_its_own_timeout(server: ChatServer) -> None:
    server.hang()
    provider = chat_for(server)  # made first: the clock is for the call alone
    started = time.monotonic()
    with pytest.raises(ProviderError) as slow:
        provider.complete([], [ChatMessage("user", "hi")], timeout=0.3)
    assert slow.value.kind is ErrorKind.TIMEOUT
    assert "within 0.3 s" in slow.value.message
    assert time.monotonic() - started < 3


def test_a_stream_that_goes_silent_is_cut_off_too(server: ChatServer) -> None:
    server.stall("one two three", after=1)
    stream = chat_for(server, timeout_seconds=0.5).stream([], [ChatMessage("user", "hi")])
    assert next(stream) == TextDelta("one ")
    with pytest.raises(ProviderError) as slow:
        next(stream)
    assert slow.value.kind is ErrorKind.TIMEOUT
