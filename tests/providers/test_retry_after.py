"""A rate-limited answer says when to come back; the owner is told that wait, in words."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from tests.fakes.bedrock_server import BedrockServer
from tests.fakes.openai_server import OpenAIServer
from tests.providers.common import bedrock_chat, openai_chat
from timothy.errors import ErrorKind, ProviderError
from timothy.providers.backoff import Backoff
from timothy.providers.base import ChatMessage
from timothy.providers.openai_embeddings import OpenAIEmbeddings
from timothy.providers.retry_after import parse_retry_after, wait_in_words
from timothy.providers.titan import TitanEmbeddings

# Gives up at once when the server asks for more than a second: the tests read the message.
IMPATIENT = Backoff(first_delay=0.01, max_delay=0.05, total_seconds=1.0)
HI = [ChatMessage("user", "hi")]


def http_date(seconds_from_now: float) -> str:
    return format_datetime(datetime.now(UTC) + timedelta(seconds=seconds_from_now), usegmt=True)


@pytest.mark.parametrize(
    ("headers", "words"),
    [
        ({"retry-after": "20"}, "try again in about 20 seconds"),
        ({"retry-after": "7.2"}, "try again in about 8 seconds"),
        ({"retry-after": "180"}, "try again in about 3 minutes"),
        ({"retry-after-ms": "20000"}, "try again in about 20 seconds"),
        ({"retry-after-ms": "45000", "retry-after": "45"}, "try again in about 45 seconds"),
        ({"retry-after": "3600"}, "try again in about an hour"),
        ({}, "try again in a minute"),
        ({"retry-after": "soon"}, "try again in a minute"),
        ({"retry-after": "-5"}, "try again in a minute"),
        ({"retry-after": "nan"}, "try again in a minute"),
        ({"retry-after": "99999999999"}, "try again in a minute"),
        ({"retry-after-ms": "lots", "retry-after": "30"}, "try again in about 30 seconds"),
    ],
)
def test_openai_throttling_says_the_wait_the_server_asked_for(
    openai_server: OpenAIServer, headers: dict[str, str], words: str
) -> None:
    openai_server.fail(429, times=None, headers=headers)
    provider = openai_chat(openai_server)
    provider._backoff = IMPATIENT
    with pytest.raises(ProviderError) as throttled:
        provider.complete([], HI)
    assert throttled.value.kind is ErrorKind.THROTTLED
    assert words in throttled.value.message, throttled.value.message


def test_an_http_date_is_read_as_the_time_left_until_it(openai_server: OpenAIServer) -> None:
    openai_server.fail(429, times=None, retry_after=http_date(3 * 60))
    provider = openai_chat(openai_server)
    provider._backoff = IMPATIENT
    with pytest.raises(ProviderError) as throttled:
        provider.stream([], HI).__next__()
    assert "try again in about 3 minutes" in throttled.value.message
    assert throttled.value.retry_after is not None
    assert 150 < throttled.value.retry_after <= 180  # less the time the request took


def test_the_wait_words_survive_giving_up_after_retries(openai_server: OpenAIServer) -> None:
    openai_server.fail(429, times=None, headers={"retry-after-ms": "200"})
    provider = openai_chat(openai_server)
    provider._backoff = Backoff(first_delay=0.01, max_delay=0.05, total_seconds=0.5)
    with pytest.raises(ProviderError) as throttled:
        provider.complete([], HI)
    assert "is rate-limiting requests; try again in a moment (gave up after " in (
        throttled.value.message
    )
    assert len(openai_server.requests) >= 2  # it did wait and retry before giving up
    assert throttled.value.retry_after == pytest.approx(0.2)


def test_retry_after_ms_is_how_long_the_backoff_waits(openai_server: OpenAIServer) -> None:
    openai_server.fail(429, headers={"retry-after-ms": "400"})
    openai_server.reply("Now then.")
    provider = openai_chat(openai_server)
    provider._backoff = Backoff(first_delay=0.01, max_delay=0.02, total_seconds=5.0)
    started = time.monotonic()
    assert provider.complete([], HI) == "Now then."
    assert time.monotonic() - started >= 0.4  # not the 10-20 ms of its own backoff
    assert len(openai_server.requests) == 2


def test_openai_embeddings_throttling_says_the_wait(openai_server: OpenAIServer) -> None:
    openai_server.fail(429, on="embeddings", times=None, retry_after=90)
    embedder = OpenAIEmbeddings(openai_server.settings(), backoff=IMPATIENT)
    with pytest.raises(ProviderError) as throttled:
        embedder.embed(["a"])
    assert "try again in about 2 minutes" in throttled.value.message


@pytest.mark.parametrize(
    ("headers", "words"),
    [
        ({"Retry-After": "20"}, "try again in about 20 seconds"),
        ({"Retry-After": "600"}, "try again in about 10 minutes"),
        ({}, "try again in a minute"),
        ({"Retry-After": "Tomorrow-ish"}, "try again in a minute"),
    ],
)
def test_bedrock_throttling_says_the_wait_the_server_asked_for(
    bedrock_server: BedrockServer, headers: dict[str, str], words: str
) -> None:
    bedrock_server.fail("ThrottlingException", times=None, headers=headers)
    provider = bedrock_chat(bedrock_server)
    provider._backoff = IMPATIENT
    with pytest.raises(ProviderError) as throttled:
        list(provider.stream([], HI))
    assert throttled.value.kind is ErrorKind.THROTTLED
    expected = f"Bedrock is rate-limiting requests; {words}"
    assert throttled.value.message.startswith(expected), throttled.value.message


def test_titan_throttling_says_the_wait(bedrock_server: BedrockServer) -> None:
    # Ten minutes ahead: worded the same however long the client takes to be made.
    bedrock_server.fail(
        "ThrottlingException", on="embeddings", times=None, headers={"Retry-After": http_date(600)}
    )
    embedder = TitanEmbeddings(bedrock_server.settings(), backoff=IMPATIENT)
    with pytest.raises(ProviderError) as throttled:
        embedder.embed_query("hello")
    assert "try again in about 10 minutes" in throttled.value.message


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (None, "in a minute"),
        (0.0, "in a moment"),
        (1.0, "in a moment"),
        (2.0, "in about 2 seconds"),
        (59.2, "in about 60 seconds"),
        (60.0, "in about a minute"),
        (100.0, "in about 2 minutes"),
        (150.0, "in about 3 minutes"),
        (59 * 60.0, "in about 59 minutes"),
        (2.5 * 3600, "in about 3 hours"),
    ],
)
def test_waits_are_worded_for_a_person(seconds: float | None, words: str) -> None:
    assert wait_in_words(seconds) == words


def test_a_date_already_past_means_now_and_a_zoneless_one_means_gmt() -> None:
    now = datetime(2026, 12, 3, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after({"Retry-After": "Thu, 03 Dec 2026 11:59:00 GMT"}, now=now) == 0.0
    assert parse_retry_after({"Retry-After": "Thursday, 03-Dec-26 12:00:30 GMT"}, now=now) == 30.0
    assert parse_retry_after({"Retry-After": "Thu Dec  3 12:01:00 2026"}, now=now) == 60.0
    assert parse_retry_after({"Retry-After": "Thu, 99 Foo 2026"}, now=now) is None
