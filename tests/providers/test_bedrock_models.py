"""Bedrock's chat models for the region, from the control plane (the real boto3 "bedrock"
client against a fake on 127.0.0.1): text models that stream, under the ids Converse takes."""

from __future__ import annotations

import pytest

from tests.fakes.bedrock_control_server import BedrockControlServer, model
from timothy.errors import ErrorKind, ProviderError
from timothy.providers.bedrock_models import chat_capable, list_bedrock_chat_models
from timothy.providers.settings import BedrockSettings

SETTINGS = BedrockSettings(region="us-east-1", timeout_seconds=5.0)


def test_the_region_lists_its_chat_models_under_the_ids_converse_takes(
    bedrock_control: BedrockControlServer,
) -> None:
    listed = list_bedrock_chat_models(SETTINGS)
    assert listed.region == "us-east-1"
    assert listed.models == (
        "global.amazon.nova-lite-v1:0",
        "us.amazon.nova-lite-v1:0",
        "us.amazon.nova-micro-v1:0",
        "us.amazon.nova-pro-v1:0",
        "us.anthropic.claude-3-haiku-20240307-v1:0",
        "anthropic.claude-3-haiku-20240307-v1:0",
        "meta.llama3-8b-instruct-v1:0",
    )
    # Embedding, image, rerank and legacy models are not offered.
    assert not any(
        word in name for name in listed.models for word in ("embed", "image", "rerank", "j2")
    )
    operations = [r.operation for r in bedrock_control.requests]
    assert operations[0] == "ListFoundationModels"
    assert operations.count("ListInferenceProfiles") == 3, "every page of profiles was read"
    assert all(r.query.get("type") == "SYSTEM_DEFINED" for r in bedrock_control.requests[1:])
    assert "us-east-1" in bedrock_control.requests[0].headers["authorization"]


def test_without_leave_to_list_profiles_the_regions_geography_is_used(
    bedrock_control: BedrockControlServer,
) -> None:
    bedrock_control.profiles_denied = True
    listed = list_bedrock_chat_models(SETTINGS)
    assert "us.amazon.nova-lite-v1:0" in listed.models
    assert "global.amazon.nova-lite-v1:0" not in listed.models


def test_an_explicit_endpoint_and_the_region_from_the_environment(
    bedrock_control: BedrockControlServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ENDPOINT_URL_BEDROCK")
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    listed = list_bedrock_chat_models(BedrockSettings(), endpoint_url=bedrock_control.url)
    assert listed.region == "us-west-2"
    assert "us-west-2" in bedrock_control.requests[0].headers["authorization"]


def test_failures_are_sentences(bedrock_control: BedrockControlServer) -> None:
    bedrock_control.fail_with = "AccessDeniedException"
    with pytest.raises(ProviderError, match="may not list Bedrock's models in us-east-1") as denied:
        list_bedrock_chat_models(SETTINGS)
    assert denied.value.kind is ErrorKind.ACCESS_DENIED
    bedrock_control.fail_with = "UnrecognizedClientException"
    with pytest.raises(ProviderError, match="AWS refused the credentials"):
        list_bedrock_chat_models(SETTINGS)
    bedrock_control.fail_with = None
    bedrock_control.models = [model("amazon.titan-embed-text-v2:0", outputs=("EMBEDDING",))]
    with pytest.raises(ProviderError, match="no chat model in us-east-1"):
        list_bedrock_chat_models(SETTINGS)


def test_an_unreachable_control_plane_is_a_sentence(bedrock_control: BedrockControlServer) -> None:
    url = bedrock_control.url
    bedrock_control.stop()
    with pytest.raises(ProviderError, match="Could not reach Amazon Bedrock in us-east-1"):
        list_bedrock_chat_models(SETTINGS, endpoint_url=url)


def test_what_counts_as_a_chat_model() -> None:
    assert chat_capable(model("meta.llama3-8b-instruct-v1:0"))
    assert not chat_capable(model("x.y", streaming=False))
    assert not chat_capable(model("x.y", outputs=("EMBEDDING",)))
    assert not chat_capable(model("x.y", status="LEGACY"))
