"""A fake Bedrock control plane: ListFoundationModels and ListInferenceProfiles (paged), in
the rest-json shape botocore parses. `boto3.client("bedrock")` points at it with
`endpoint_url` (or `AWS_ENDPOINT_URL_BEDROCK`), dummy credentials and an explicit region.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.bedrock_server import DEFAULT_MESSAGES, ERROR_STATUS
from tests.fakes.http_fake import Exchange, FakeServer

REGION = "us-east-1"
ACCOUNT = "123456789012"


def model(
    model_id: str,
    *,
    inputs: tuple[str, ...] = ("TEXT",),
    outputs: tuple[str, ...] = ("TEXT",),
    streaming: bool = True,
    kinds: tuple[str, ...] = ("ON_DEMAND",),
    status: str = "ACTIVE",
    name: str = "",
) -> dict[str, Any]:
    """One ListFoundationModels summary, as Bedrock writes it."""
    provider = model_id.split(".")[0].capitalize()
    return {
        "modelArn": f"arn:aws:bedrock:{REGION}::foundation-model/{model_id}",
        "modelId": model_id,
        "modelName": name or model_id,
        "providerName": provider,
        "inputModalities": list(inputs),
        "outputModalities": list(outputs),
        "responseStreamingSupported": streaming,
        "customizationsSupported": [],
        "inferenceTypesSupported": list(kinds),
        "modelLifecycle": {"status": status},
    }


# What us-east-1 lists, in miniature: chat models on demand and through profiles only, and
# the kinds a chat picker must leave out.
MODELS = [
    model("amazon.nova-pro-v1:0", inputs=("TEXT", "IMAGE", "VIDEO"), kinds=("INFERENCE_PROFILE",)),
    model("amazon.nova-lite-v1:0", inputs=("TEXT", "IMAGE", "VIDEO"), kinds=("INFERENCE_PROFILE",)),
    model("amazon.nova-micro-v1:0", kinds=("INFERENCE_PROFILE",)),
    model("anthropic.claude-3-haiku-20240307-v1:0", kinds=("ON_DEMAND", "INFERENCE_PROFILE")),
    model("meta.llama3-8b-instruct-v1:0"),
    model("amazon.titan-embed-text-v2:0", outputs=("EMBEDDING",), streaming=False),
    model("amazon.titan-image-generator-v2:0", inputs=("TEXT", "IMAGE"), outputs=("IMAGE",)),
    model("cohere.rerank-v3-5:0", streaming=False),
    model("ai21.j2-ultra-v1", status="LEGACY"),
]


def profile(profile_id: str, *model_ids: str) -> dict[str, Any]:
    return {
        "inferenceProfileName": profile_id,
        "inferenceProfileArn": f"arn:aws:bedrock:{REGION}:{ACCOUNT}:inference-profile/{profile_id}",
        "inferenceProfileId": profile_id,
        "status": "ACTIVE",
        "type": "SYSTEM_DEFINED",
        "models": [
            {"modelArn": f"arn:aws:bedrock:{region}::foundation-model/{m}"}
            for m in model_ids
            for region in ("us-east-1", "us-west-2")
        ],
    }


PROFILES = [
    profile("us.amazon.nova-pro-v1:0", "amazon.nova-pro-v1:0"),
    profile("us.amazon.nova-lite-v1:0", "amazon.nova-lite-v1:0"),
    profile("us.amazon.nova-micro-v1:0", "amazon.nova-micro-v1:0"),
    profile("us.anthropic.claude-3-haiku-20240307-v1:0", "anthropic.claude-3-haiku-20240307-v1:0"),
    profile("global.amazon.nova-lite-v1:0", "amazon.nova-lite-v1:0"),
]


class BedrockControlServer(FakeServer):
    """Answers like Bedrock's control plane; `fail_with` makes every call answer that error,
    `profiles_denied` refuses only ListInferenceProfiles."""

    region = REGION

    def __init__(self) -> None:
        super().__init__()
        self.models: list[dict[str, Any]] = list(MODELS)
        self.profiles: list[dict[str, Any]] = list(PROFILES)
        self.page_size = 2  # profiles come in pages, as a real account's many do
        self.fail_with: str | None = None
        self.profiles_denied = False

    def handle(self, exchange: Exchange) -> None:
        request = exchange.request
        operation = {
            "/foundation-models": "ListFoundationModels",
            "/inference-profiles": "ListInferenceProfiles",
        }.get(request.path, "")
        request.operation = operation
        self.record(request)
        if request.method != "GET" or not operation:
            self._error(exchange, "UnknownOperationException", "Unknown operation", 404)
        elif "AWS4-HMAC-SHA256" not in request.headers.get("authorization", ""):
            self._error(exchange, "MissingAuthenticationTokenException", "Missing token", 403)
        elif self.fail_with:
            self._error(exchange, self.fail_with, None)
        elif operation == "ListFoundationModels":
            exchange.send_json(200, {"modelSummaries": self.models})
        elif self.profiles_denied:
            self._error(exchange, "AccessDeniedException", "not authorized: ListInferenceProfiles")
        else:
            self._list_profiles(exchange)

    def _list_profiles(self, exchange: Exchange) -> None:
        query = exchange.request.query
        wanted = query.get("type", "SYSTEM_DEFINED")
        chosen = [p for p in self.profiles if p["type"] == wanted]
        start = int(query.get("nextToken") or 0)
        size = min(int(query.get("maxResults") or 1000), self.page_size)
        page: dict[str, Any] = {"inferenceProfileSummaries": chosen[start : start + size]}
        if start + size < len(chosen):
            page["nextToken"] = str(start + size)
        exchange.send_json(200, page)

    def _error(self, exchange: Exchange, code: str, message: str | None, status: int = 0) -> None:
        exchange.send_json(
            status or ERROR_STATUS.get(code, 400),
            {"message": message or DEFAULT_MESSAGES.get(code, code)},
            {"x-amzn-ErrorType": code, "x-amzn-RequestId": "fake-request-id"},
        )
