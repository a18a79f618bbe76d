"""Bedrock chat (Converse / ConverseStream) and Titan embeddings, through real boto3, faked."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from tests.fakes.bedrock_server import TITAN_V1, TITAN_V2, BedrockServer
from tests.fakes.script import call
from tests.providers.common import FAST, REMEMBER, SYSTEM, bedrock_chat
from timothy.errors import ErrorKind, ProviderError
from timothy.providers.backoff import Backoff
from timothy.providers.base import (
    ChatMessage,
    Stop,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    Usage,
)
from timothy.providers.bedrock_chat import BedrockChat, base_model, supports_cache_point
from timothy.providers.factory import chat_provider, embedding_provider
from timothy.providers.titan import TitanEmbeddings
from timothy.settings import BedrockSettings, Settings

chat = bedrock_chat


def test_streams_text_then_tool_calls_then_usage_then_stop(bedrock_server: BedrockServer) -> None:
    bedrock_server.reply(
        "Noted, saving that.",
        tool_calls=[call("remember", {"content": "prefers aisle seats"}, id="tooluse_a")],
        usage=(120, 9, 100),
    )
    events = list(chat(bedrock_server).stream(SYSTEM, [ChatMessage("user", "aisle!")], [REMEMBER]))
    assert events == [
        TextDelta("Noted, "),
        TextDelta("saving "),
        TextDelta("that."),
        ToolCallEvent(ToolCall("tooluse_a", "remember", '{"content": "prefers aisle seats"}')),
        Usage(input_tokens=120, output_tokens=9, cached_tokens=100),
        Stop("tool_use"),
    ]
    request = bedrock_server.requests[-1]
    assert request.operation == "ConverseStream"
    assert request.model == "us.amazon.nova-lite-v1:0"
    sent = request.json
    # the cache point sits right after the stable prefix, before the per-turn memory block
    assert sent["system"] == [
        {"text": "You are Timothy."},
        {"cachePoint": {"type": "default"}},
        {"text": "<memory>…</memory>"},
    ]
    assert sent["messages"] == [{"role": "user", "content": [{"text": "aisle!"}]}]
    assert sent["toolConfig"] == {
        "tools": [
            {
                "toolSpec": {
                    "name": "remember",
                    "description": REMEMBER.description,
                    "inputSchema": {"json": REMEMBER.parameters},
                }
            }
        ]
    }
    # signed for the configured region with the credentials from the standard chain
    assert "Credential=AKIDFAKEFORTESTS/" in request.headers["authorization"]
    assert "/us-east-1/bedrock/aws4_request" in request.headers["authorization"]


def test_a_tool_round_trip_sends_tool_use_and_tool_result(bedrock_server: BedrockServer) -> None:
    provider = chat(bedrock_server)
    bedrock_server.reply(tool_calls=[call("remember", {"content": "aisle"}, id="tooluse_1")])
    bedrock_server.reply("Saved.")
    first = list(provider.stream(SYSTEM, [ChatMessage("user", "remember aisle")], [REMEMBER]))
    tool_call = next(e.call for e in first if isinstance(e, ToolCallEvent))
    assert first[-1] == Stop("tool_use")
    history = [
        ChatMessage("user", "remember aisle"),
        ChatMessage("assistant", "", tool_calls=(tool_call,)),
        ChatMessage("tool", "saved as 01J…", tool_call_id=tool_call.id),
        ChatMessage("user", "thanks"),
    ]
    second = list(provider.stream(SYSTEM, history, [REMEMBER]))
    assert second[0] == TextDelta("Saved.")
    assert second[-1] == Stop("end_turn")
    assert bedrock_server.chat_requests[-1]["messages"] == [
        {"role": "user", "content": [{"text": "remember aisle"}]},
        {
            "role": "assistant",
            "content": [
                {
                    "toolUse": {
                        "toolUseId": "tooluse_1",
                        "name": "remember",
                        "input": {"content": "aisle"},
                    }
                }
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "tooluse_1",
                        "content": [{"text": "saved as 01J…"}],
                    }
                },
                {"text": "thanks"},
            ],
        },
    ]


def test_complete_uses_converse(bedrock_server: BedrockServer) -> None:
    bedrock_server.reply("A short title")
    text = chat(bedrock_server).complete(SYSTEM, [ChatMessage("user", "title?")], max_tokens=20)
    assert text == "A short title"
    request = bedrock_server.requests[-1]
    assert request.operation == "Converse"
    assert request.json["inferenceConfig"] == {"maxTokens": 20}


def test_no_cache_point_for_a_model_that_refuses_one(bedrock_server: BedrockServer) -> None:
    provider = chat(bedrock_server, chat_model="anthropic.claude-3-haiku-20240307-v1:0")
    list(provider.stream(SYSTEM, [ChatMessage("user", "hi")]))
    assert bedrock_server.chat_requests[-1]["system"] == [
        {"text": "You are Timothy."},
        {"text": "<memory>…</memory>"},
    ]


@pytest.mark.parametrize(
    ("model", "cacheable"),
    [
        ("us.amazon.nova-lite-v1:0", True),
        ("amazon.nova-pro-v1:0", True),
        ("eu.amazon.nova-micro-v1:0", True),
        ("global.anthropic.claude-sonnet-4-20250514-v1:0", True),
        ("anthropic.claude-3-haiku-20240307-v1:0", False),
        ("meta.llama3-70b-instruct-v1:0", False),
        ("arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-lite-v1:0", True),
    ],
)
def test_which_models_get_a_cache_point(model: str, cacheable: bool) -> None:
    assert supports_cache_point(model) is cacheable


def test_base_model_strips_the_inference_profile_geography() -> None:
    assert base_model("us.amazon.nova-lite-v1:0") == "amazon.nova-lite-v1:0"
    assert base_model("apac.amazon.nova-pro-v1:0") == "amazon.nova-pro-v1:0"


def test_the_factory_builds_bedrock_from_settings(bedrock_server: BedrockServer) -> None:
    settings = Settings(
        chat_provider="bedrock", embedding_provider="bedrock", bedrock=bedrock_server.settings()
    )
    provider = chat_provider(settings)
    embedder = embedding_provider(settings)
    assert provider is not None and provider.name == "bedrock"
    assert provider.model == "us.amazon.nova-lite-v1:0"
    assert embedder is not None and embedder.model_id == f"bedrock/{TITAN_V2}@1024"


# -- Titan embeddings ---------------------------------------------------------------------


def test_titan_v2_request_body_and_vectors(bedrock_server: BedrockServer) -> None:
    embedder = TitanEmbeddings(bedrock_server.settings(), backoff=FAST)
    assert (embedder.model_id, embedder.dimension) == (f"bedrock/{TITAN_V2}@1024", 1024)
    vectors = embedder.embed(["aisle seats", "birthday cake", "aisle seat"])
    assert [len(v) for v in vectors] == [1024] * 3
    bodies = {r["inputText"]: r for r in bedrock_server.embedding_requests}
    assert bodies["aisle seats"] == {
        "inputText": "aisle seats",
        "dimensions": 1024,
        "normalize": True,
    }
    assert {r.model for r in bedrock_server.requests} == {TITAN_V2}
    assert {r.headers["content-type"] for r in bedrock_server.requests} == {"application/json"}

    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    # parallel calls, yet each vector lands at its text's place
    assert cosine(vectors[0], vectors[2]) > cosine(vectors[0], vectors[1])


@pytest.mark.parametrize("dimension", [512, 256])
def test_titan_v2_shorter_vectors_are_models_of_their_own(
    bedrock_server: BedrockServer, dimension: int
) -> None:
    embedder = TitanEmbeddings(bedrock_server.settings(embedding_dimension=dimension))
    assert embedder.model_id == f"bedrock/{TITAN_V2}@{dimension}"
    assert len(embedder.embed_query("hello")) == dimension
    assert bedrock_server.embedding_requests[-1]["dimensions"] == dimension


def test_titan_v2_refuses_an_impossible_dimension(bedrock_server: BedrockServer) -> None:
    with pytest.raises(ProviderError) as wrong:
        TitanEmbeddings(bedrock_server.settings(embedding_dimension=384))
    assert wrong.value.kind is ErrorKind.NOT_CONFIGURED
    assert "1024, 512 or 256" in str(wrong.value)


def test_titan_v1_sends_only_the_text(bedrock_server: BedrockServer) -> None:
    embedder = TitanEmbeddings(bedrock_server.settings(embedding_model=TITAN_V1))
    assert (embedder.model_id, embedder.dimension) == (f"bedrock/{TITAN_V1}", 1536)
    assert len(embedder.embed_query("hello there")) == 1536
    assert bedrock_server.embedding_requests[-1] == {"inputText": "hello there"}
    assert bedrock_server.requests[-1].model == TITAN_V1


def test_an_unsupported_bedrock_embedding_model_is_refused(bedrock_server: BedrockServer) -> None:
    with pytest.raises(ProviderError) as wrong:
        TitanEmbeddings(bedrock_server.settings(embedding_model="cohere.embed-english-v3"))
    assert wrong.value.kind is ErrorKind.NOT_CONFIGURED


# -- failures -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "kind", "words"),
    [
        (
            "AccessDeniedException",
            ErrorKind.ACCESS_DENIED,
            "no access to the model 'us.amazon.nova-lite-v1:0' in us-east-1",
        ),
        ("UnrecognizedClientException", ErrorKind.AUTH, "AWS refused the credentials"),
        ("ExpiredTokenException", ErrorKind.AUTH, "credentials have expired"),
        ("ResourceNotFoundException", ErrorKind.MODEL_NOT_FOUND, "has no model"),
        ("ModelTimeoutException", ErrorKind.TIMEOUT, "took too long"),
        ("ServiceQuotaExceededException", ErrorKind.QUOTA, "quota"),
    ],
)
def test_each_bedrock_error_gets_a_plain_message(
    bedrock_server: BedrockServer, code: str, kind: ErrorKind, words: str
) -> None:
    bedrock_server.fail(code)
    with pytest.raises(ProviderError) as failed:
        chat(bedrock_server).complete([], [ChatMessage("user", "hi")])
    assert failed.value.kind is kind
    assert words in failed.value.message
    assert failed.value.detail and code in failed.value.detail
    assert len(bedrock_server.requests) == 1


@pytest.mark.parametrize(
    ("message", "kind", "words"),
    [
        ("The provided model identifier is invalid.", ErrorKind.MODEL_NOT_FOUND, "has no model"),
        (
            "Invocation of model ID amazon.nova-lite-v1:0 with on-demand throughput isn't "
            "supported. Retry your request with the ID or ARN of an inference profile.",
            ErrorKind.MODEL_NOT_FOUND,
            "inference profile",
        ),
        ("Input is too long for requested model.", ErrorKind.CONTEXT_TOO_LONG, "too long"),
        ("messages: field required", ErrorKind.BAD_REQUEST, "refused the request"),
    ],
)
def test_validation_errors_are_told_apart(
    bedrock_server: BedrockServer, message: str, kind: ErrorKind, words: str
) -> None:
    bedrock_server.fail("ValidationException", message=message)
    with pytest.raises(ProviderError) as failed:
        chat(bedrock_server).complete([], [ChatMessage("user", "hi")])
    assert failed.value.kind is kind
    assert words in failed.value.message


def test_an_unknown_model_id_is_named(bedrock_server: BedrockServer) -> None:
    provider = chat(bedrock_server, chat_model="us.amazon.nova-giant-v9:0")
    with pytest.raises(ProviderError) as failed:
        list(provider.stream([], [ChatMessage("user", "hi")]))
    assert failed.value.kind is ErrorKind.MODEL_NOT_FOUND
    assert "us.amazon.nova-giant-v9:0" in failed.value.message


def test_server_errors_are_retried_and_can_recover(bedrock_server: BedrockServer) -> None:
    bedrock_server.fail("InternalServerException")
    bedrock_server.fail("ServiceUnavailableException")
    bedrock_server.reply("Back again.")
    assert chat(bedrock_server).complete([], [ChatMessage("user", "hi")]) == "Back again."
    assert len(bedrock_server.requests) == 3


def test_throttling_is_retried_then_given_up_within_its_bound(
    bedrock_server: BedrockServer,
) -> None:
    bedrock_server.fail("ThrottlingException", times=None)
    provider = chat(bedrock_server)
    provider._backoff = Backoff(first_delay=0.05, max_delay=0.2, total_seconds=1.0, max_attempts=50)
    started = time.monotonic()
    with pytest.raises(ProviderError) as throttled:
        list(provider.stream([], [ChatMessage("user", "hi")]))
    elapsed = time.monotonic() - started
    assert throttled.value.kind is ErrorKind.THROTTLED
    assert throttled.value.message.startswith("Bedrock is rate-limiting requests")
    assert len(bedrock_server.requests) >= 3
    assert elapsed < 1.0 + 1.0  # stopped at its bound (plus the last request), not after 50 tries


def test_titan_throttling_is_retried_too(bedrock_server: BedrockServer) -> None:
    bedrock_server.fail("ThrottlingException", on="embeddings", times=2)
    embedder = TitanEmbeddings(bedrock_server.settings(), backoff=FAST)
    assert len(embedder.embed_query("hello")) == 1024
    assert len(bedrock_server.requests) == 3


def test_titan_access_denied_is_plain(bedrock_server: BedrockServer) -> None:
    bedrock_server.denied_models.add(TITAN_V2)
    embedder = TitanEmbeddings(bedrock_server.settings(), backoff=FAST)
    with pytest.raises(ProviderError) as denied:
        embedder.embed(["a", "b"])
    assert denied.value.kind is ErrorKind.ACCESS_DENIED
    assert f"'{TITAN_V2}' in us-east-1" in denied.value.message


def test_throttling_mid_stream_is_a_provider_error(bedrock_server: BedrockServer) -> None:
    bedrock_server.fail_midstream("throttlingException", text="Partial answer")
    stream = chat(bedrock_server).stream([], [ChatMessage("user", "hi")])
    assert next(stream) == TextDelta("Partial ")
    with pytest.raises(ProviderError) as failed:
        list(stream)
    assert failed.value.kind is ErrorKind.THROTTLED


def test_an_unreachable_endpoint_is_named(bedrock_server: BedrockServer) -> None:
    bedrock_server.stop()
    provider = chat(bedrock_server, timeout_seconds=2)
    with pytest.raises(ProviderError) as down:
        provider.complete([], [ChatMessage("user", "hi")])
    assert down.value.kind is ErrorKind.UNREACHABLE
    assert "Could not reach Amazon Bedrock in us-east-1" in down.value.message


def test_no_region_is_a_plain_error(aws_credentials: None) -> None:
    with pytest.raises(ProviderError) as missing:
        BedrockChat(BedrockSettings())
    assert missing.value.kind is ErrorKind.NOT_CONFIGURED
    message = missing.value.message
    assert message.startswith("No AWS region is set for Bedrock: Settings names none, ")
    assert "AWS_REGION and AWS_DEFAULT_REGION are not set" in message
    assert "the 'default' profile in " in message and "has no region" in message


def signed_region(server: BedrockServer, settings: BedrockSettings) -> str:
    """The region a real request to the fake server was signed for."""
    server.reply("Hi.")
    provider = BedrockChat(settings, backoff=FAST)
    list(provider.stream(SYSTEM, [ChatMessage("user", "hi")], []))
    authorization = server.requests[-1].headers["authorization"]
    return authorization.split("Credential=")[1].split("/")[2]


@pytest.mark.parametrize("variable", ["AWS_REGION", "AWS_DEFAULT_REGION"])
def test_the_region_comes_from_either_environment_variable(
    bedrock_server: BedrockServer, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    monkeypatch.setenv(variable, "eu-west-3")
    settings = bedrock_server.settings(region=None)
    assert signed_region(bedrock_server, settings) == "eu-west-3"


def test_aws_region_wins_over_aws_default_region_and_settings_win_over_both(
    bedrock_server: BedrockServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    assert signed_region(bedrock_server, bedrock_server.settings(region=None)) == "eu-west-3"
    settings = bedrock_server.settings(region="us-west-2")
    assert signed_region(bedrock_server, settings) == "us-west-2"


def test_the_region_comes_from_the_profile(
    bedrock_server: BedrockServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    config.write_text(
        "[profile work]\nregion = ca-central-1\n"
        "aws_access_key_id = AKIDWORKPROFILE\naws_secret_access_key = s3cret\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    settings = bedrock_server.settings(region=None, profile="work")
    assert signed_region(bedrock_server, settings) == "ca-central-1"


def test_a_missing_profile_is_a_plain_error(aws_credentials: None) -> None:
    with pytest.raises(ProviderError) as missing:
        BedrockChat(BedrockSettings(region="us-east-1", profile="nobody"))
    assert missing.value.kind is ErrorKind.NOT_CONFIGURED
    assert "The AWS profile 'nobody' does not exist" in missing.value.message


def test_a_named_profile_supplies_the_credentials(
    bedrock_server: BedrockServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    credentials = tmp_path / "credentials"
    credentials.write_text(
        "[work]\naws_access_key_id = AKIDWORKPROFILE\naws_secret_access_key = s3cret\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    chat(bedrock_server, profile="work").complete([], [ChatMessage("user", "hi")])
    assert "Credential=AKIDWORKPROFILE/" in bedrock_server.requests[-1].headers["authorization"]


def test_no_credentials_is_a_plain_error(
    bedrock_server: BedrockServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with caplog.at_level(logging.WARNING), pytest.raises(ProviderError) as missing:
        chat(bedrock_server).complete([], [ChatMessage("user", "hi")])
    assert missing.value.kind is ErrorKind.AUTH
    assert "No usable AWS credentials" in missing.value.message
    assert bedrock_server.requests == []
    assert "NoCredentialsError" in caplog.text


@pytest.mark.parametrize("region", ["mars-1", "us-east1", "Frankfurt"])
def test_a_mistyped_region_is_named_not_blamed_on_the_network(
    bedrock_server: BedrockServer, region: str
) -> None:
    bedrock_server.stop()  # as unreachable as a region that does not exist
    provider = chat(bedrock_server, region=region, timeout_seconds=2)
    with pytest.raises(ProviderError) as wrong:
        provider.complete([], [ChatMessage("user", "hi")])
    assert wrong.value.kind is ErrorKind.NOT_CONFIGURED
    assert f"'{region}' is not an AWS region's name" in wrong.value.message
    assert "network" not in wrong.value.message


def test_an_unknown_but_well_formed_region_is_hinted_at(bedrock_server: BedrockServer) -> None:
    bedrock_server.stop()
    provider = chat(bedrock_server, region="us-east-9", timeout_seconds=2)
    with pytest.raises(ProviderError) as down:
        provider.complete([], [ChatMessage("user", "hi")])
    assert down.value.kind is ErrorKind.UNREACHABLE  # perhaps a region newer than botocore
    assert "does not know us-east-9" in down.value.message
