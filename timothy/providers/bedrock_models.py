"""The chat models Bedrock offers in the owner's region: `ListFoundationModels` on the control
plane, kept to active models that read and write text and stream (what a chat turn through
ConverseStream needs; embedding, image and rerank models drop out), each under the id a
Converse call takes: the model's own id where it runs on demand, and the region's
cross-region inference profiles (`us.amazon.nova-lite-v1:0`) where it runs through one.
Two bounded requests; call it off any UI thread.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from timothy.errors import ErrorKind, ProviderError
from timothy.providers.bedrock_client import make_client, region_of, translate
from timothy.providers.sdk import importing
from timothy.providers.settings import BedrockSettings

LIST_TIMEOUT_SECONDS = 10.0
# The models Timothy knows run on Bedrock (Amazon Nova, through the US profiles): what the
# pickers offer when the region's own list cannot be had.
KNOWN_MODELS = (
    "us.amazon.nova-lite-v1:0",
    "us.amazon.nova-micro-v1:0",
    "us.amazon.nova-pro-v1:0",
)
# The geography of a region's system inference profiles, when they cannot be listed.
_GEOGRAPHIES = (("us-gov-", "us-gov"), ("us-", "us"), ("eu-", "eu"), ("ap-", "apac"))


@dataclass(frozen=True, slots=True)
class BedrockModels:
    region: str
    models: tuple[str, ...]  # ids a Converse call takes, the region's profiles first


def chat_capable(summary: dict[str, Any]) -> bool:
    """An active model that takes and gives text and can stream its answer."""
    lifecycle = summary.get("modelLifecycle") or {}
    return (
        lifecycle.get("status", "ACTIVE") == "ACTIVE"
        and "TEXT" in (summary.get("inputModalities") or ())
        and "TEXT" in (summary.get("outputModalities") or ())
        and bool(summary.get("responseStreamingSupported"))
    )


def _profiles(client: Any) -> dict[str, list[str]] | None:
    """Foundation model id -> the region's system inference profile ids that run it; None
    when the account may not list them."""
    with importing():
        import botocore.exceptions

    found: dict[str, list[str]] = {}
    token: str | None = None
    try:
        while True:
            page = client.list_inference_profiles(
                typeEquals="SYSTEM_DEFINED",
                maxResults=1000,
                **({"nextToken": token} if token else {}),
            )
            for profile in page.get("inferenceProfileSummaries", ()):
                if profile.get("status", "ACTIVE") != "ACTIVE":
                    continue
                for model in profile.get("models", ()):
                    model_id = str(model.get("modelArn", "")).rpartition("/")[2]
                    if model_id:
                        found.setdefault(model_id, []).append(str(profile["inferenceProfileId"]))
            token = page.get("nextToken")
            if not token:
                return found
    except botocore.exceptions.ClientError:
        return None  # listing models may be allowed where listing profiles is not


def _guessed_profile(region: str, model_id: str) -> list[str]:
    for prefix, geography in _GEOGRAPHIES:
        if region.startswith(prefix):
            return [f"{geography}.{model_id}"]
    return []


def list_bedrock_chat_models(
    settings: BedrockSettings, *, endpoint_url: str | None = None
) -> BedrockModels:
    """The chat models of the settings' region (see the module's note), sorted by model.

    `endpoint_url`: the control plane's address (tests; else botocore's configuration or
    the region's own). Raises ProviderError with a plain sentence when Bedrock cannot be
    asked or offers no chat model there.
    """
    bounded = dataclasses.replace(
        settings, timeout_seconds=min(settings.timeout_seconds, LIST_TIMEOUT_SECONDS)
    )
    client = make_client(bounded, service="bedrock", endpoint_url=endpoint_url)
    with importing():
        import botocore.exceptions  # loaded by make_client

    region = region_of(client)
    try:
        summaries = client.list_foundation_models().get("modelSummaries", [])
    except botocore.exceptions.ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "AccessDeniedException":
            translate(exc, model="", region=region, what="model list")  # logs the detail
            raise ProviderError(
                ErrorKind.ACCESS_DENIED,
                f"Your AWS credentials may not list Bedrock's models in {region} (the "
                "bedrock:ListFoundationModels permission); type the model id instead.",
            ) from exc
        raise translate(exc, model="", region=region, what="model list") from exc
    except Exception as exc:
        raise translate(exc, model="", region=region, what="model list") from exc
    chat = [s for s in summaries if chat_capable(s)]
    profiles = _profiles(client) if any(_needs_profile(s) for s in chat) else {}
    models: list[tuple[str, int, str]] = []
    for summary in chat:
        model_id = str(summary["modelId"])
        kinds = summary.get("inferenceTypesSupported") or ()
        if "INFERENCE_PROFILE" in kinds:
            ids = profiles.get(model_id, []) if profiles is not None else []
            if profiles is None:
                ids = _guessed_profile(region, model_id)
            models += [(model_id, 0, profile) for profile in ids]
        if "ON_DEMAND" in kinds:
            models.append((model_id, 1, model_id))
    ordered = [name for _model, _rank, name in sorted(set(models))]
    if not ordered:
        raise ProviderError(
            ErrorKind.MODEL_NOT_FOUND,
            f"Bedrock offers no chat model in {region} that Timothy can stream from; "
            "choose another region.",
        )
    return BedrockModels(region, tuple(dict.fromkeys(ordered)))


def _needs_profile(summary: dict[str, Any]) -> bool:
    return "INFERENCE_PROFILE" in (summary.get("inferenceTypesSupported") or ())
