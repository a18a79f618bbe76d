"""`timothy providers test`, `timothy providers set-key`, `timothy embed`, and the doctor."""

from __future__ import annotations

import json
import re

from tests.conftest import run_timothy
from tests.fakes.bedrock_server import BedrockServer
from tests.fakes.openai_server import OpenAIServer
from timothy.health import no_network, provider_checks
from timothy.secrets import OPENAI_API_KEY, get_secret
from timothy.settings import Settings, load_settings, save_settings
from timothy.store import Store


def test_nothing_configured_is_reported_and_passes() -> None:
    save_settings(Settings())  # the owner turned vector search off
    result = run_timothy("providers", "test")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "chat       not configured",
        "embedding  not configured (the vector leg is off)",
    ]


def test_the_doctor_needs_no_network_when_nothing_is_configured() -> None:
    with no_network():
        checks = provider_checks(Settings())
    assert [(c.name, c.ok, c.detail) for c in checks] == [
        ("chat provider", True, "not configured"),
        ("embedding provider", True, "not configured (the vector leg is off)"),
    ]


def test_configured_providers_answer_with_model_and_latency(openai_server: OpenAIServer) -> None:
    save_settings(
        Settings(
            chat_provider="openai", embedding_provider="local", openai=openai_server.settings()
        )
    )
    result = run_timothy("providers", "test")
    assert result.returncode == 0, result.stdout + result.stderr
    chat, embedding = result.stdout.splitlines()
    assert re.fullmatch(r"chat       openai gpt-4o-mini: ok, \d+ ms", chat)
    assert re.fullmatch(
        r"embedding  local/all-MiniLM-L6-v2-onnx-int8 \(384-d\): ok, \d+ ms "
        r"\(model loaded in \d+ ms\)",
        embedding,
    )
    assert openai_server.chat_requests[0]["max_tokens"] == 16

    as_json = json.loads(run_timothy("providers", "test", "--json").stdout)
    assert [(r["role"], r["provider"], r["ok"]) for r in as_json] == [
        ("chat", "openai", True),
        ("embedding", "local", True),
    ]
    assert all(isinstance(r["latency_ms"], float) for r in as_json)


def test_a_failing_provider_prints_the_plain_error(bedrock_server: BedrockServer) -> None:
    bedrock_server.denied_models.add("us.amazon.nova-lite-v1:0")
    save_settings(
        Settings(
            chat_provider="bedrock", embedding_provider="bedrock", bedrock=bedrock_server.settings()
        )
    )
    result = run_timothy("providers", "test")
    assert result.returncode == 1
    chat, embedding = result.stdout.splitlines()
    assert chat == (
        "chat       FAIL bedrock us.amazon.nova-lite-v1:0: Your AWS account has no access to the "
        "model 'us.amazon.nova-lite-v1:0' in us-east-1. Enable it under Model access in the "
        "Bedrock console, or choose another region or model."
    )
    assert re.fullmatch(
        r"embedding  bedrock/amazon.titan-embed-text-v2:0@1024 \(1024-d\): ok, \d+ ms", embedding
    )

    doctor = run_timothy("doctor")
    assert doctor.returncode == 1
    assert any(
        line.startswith("FAIL  chat provider: bedrock us.amazon.nova-lite-v1:0: Your AWS account")
        for line in doctor.stdout.splitlines()
    )


def test_providers_test_reads_the_region_from_aws_region(bedrock_server: BedrockServer) -> None:
    """Many AWS tools export only AWS_REGION; boto3 alone would not read it."""
    save_settings(
        Settings(
            chat_provider="bedrock",
            embedding_provider="bedrock",
            bedrock=bedrock_server.settings(region=None),
        )
    )
    result = run_timothy("providers", "test", env={"AWS_REGION": "eu-west-3"})
    assert result.returncode == 0, result.stdout + result.stderr
    chat, _embedding = result.stdout.splitlines()
    assert re.fullmatch(r"chat       bedrock us.amazon.nova-lite-v1:0: ok, \d+ ms", chat)
    assert "/eu-west-3/bedrock/aws4_request" in bedrock_server.requests[0].headers["authorization"]


def test_set_key_stores_the_key_in_the_keyring_only(openai_server: OpenAIServer) -> None:
    result = run_timothy("providers", "set-key", "openai", input="sk-from-stdin-1234\n")
    assert result.returncode == 0, result.stderr
    assert get_secret(OPENAI_API_KEY) == "sk-from-stdin-1234"
    assert "sk-from-stdin" not in result.stdout + result.stderr
    openai_server.api_key = "sk-from-stdin-1234"
    save_settings(Settings(chat_provider="openai", openai=openai_server.settings()))
    assert run_timothy("providers", "test").returncode == 0

    assert run_timothy("providers", "set-key", "openai", "--delete").returncode == 0
    assert get_secret(OPENAI_API_KEY) is None
    assert run_timothy("providers", "set-key", "openai", input="\n").returncode == 1


def test_embed_backfills_with_a_progress_bar_and_saves_the_choice(store: Store) -> None:
    for i in range(40):
        store.memories.add(f"fact number {i}")
    store.memories.stage("a staged fact")  # embedded once confirmed, not before
    save_settings(Settings())  # vector search off: `embed --model` turns it on

    result = run_timothy("embed", "--model", "local")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Embedded 40 of 40 memories with local/all-MiniLM-L6-v2-onnx-int8.",
        "Every memory has a vector; recall searches local/all-MiniLM-L6-v2-onnx-int8.",
    ]
    assert "[##############################] 40/40" in result.stderr
    assert load_settings().embedding_provider == "local"
    active = store.vectors.active_model()
    assert active is not None and store.vectors.count(active) == 40

    status = json.loads(run_timothy("embed", "--status", "--json").stdout)
    assert status == {
        "configured_provider": "local",
        "models": [
            {
                "model": "local/all-MiniLM-L6-v2-onnx-int8",
                "dimension": 384,
                "vectors": 40,
                "missing": 0,
                "active": True,
            }
        ],
    }


def test_embed_refuses_a_broken_model_and_switches_to_a_working_one(
    store: Store, openai_server: OpenAIServer
) -> None:
    store.memories.add("I prefer aisle seats")
    assert run_timothy("embed", "--model", "local").returncode == 0
    save_settings(load_settings().replace(openai=openai_server.settings()))

    openai_server.fail(401, on="embeddings", times=None)
    refused = run_timothy("embed", "--model", "openai")
    assert refused.returncode == 1
    assert "refused the API key" in refused.stderr
    assert load_settings().embedding_provider == "local"  # a broken choice is not saved

    openai_server.script.clear()
    switched = run_timothy("embed", "--model", "openai/text-embedding-3-small")
    assert switched.returncode == 0, switched.stderr
    assert "recall searches openai/text-embedding-3-small" in switched.stdout
    assert load_settings().embedding_provider == "openai"


def test_embed_without_a_provider_says_how_to_choose() -> None:
    save_settings(Settings())  # the owner turned vector search off
    result = run_timothy("embed")
    assert result.returncode == 1
    assert "timothy embed --model local" in result.stderr
    bad = run_timothy("embed", "--model", "cohere")
    assert bad.returncode == 1
    assert "names no embedding provider" in bad.stderr


def test_recall_searches_the_local_vectors_once_they_exist(store: Store) -> None:
    store.memories.add("I prefer aisle seats on long flights")
    store.memories.add("My birthday is on the 3rd of March")
    store.memories.add("Our dog is called Biscuit")
    query = "On long-haul trips I like sitting by the corridor"

    before = json.loads(run_timothy("recall", query, "--json", "--no-mark").stdout)
    assert before["legs"]["vector"] == "off"

    assert run_timothy("embed", "--model", "local").returncode == 0
    after = json.loads(run_timothy("recall", query, "--json", "--no-mark").stdout)
    assert after["legs"]["vector"] == "ok"
    best = after["ranked"][0]
    assert best["content"] == "I prefer aisle seats on long flights"
    assert best["ranks"]["vector"] == 1
