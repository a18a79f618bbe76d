"""The boto3 `bedrock-runtime` client, and Bedrock's failures in plain words.

Region, profile and credentials come from the standard AWS chain (environment, config files,
SSO, instance roles), with the profile and region settings taking precedence when given. The
region is looked up as the AWS CLI does (`resolve_region`): Settings, then `AWS_REGION`, then
`AWS_DEFAULT_REGION`, then the profile's `region` in the AWS config file; boto3 alone reads
only the last two.
Every call is bounded by connect and read timeouts; botocore's own retries are off so that
`Backoff` decides (with its total bound).
"""

from __future__ import annotations

import functools
import logging
import os
import re
from datetime import UTC, datetime
from typing import Any

from timothy.errors import ErrorKind, ProviderError
from timothy.providers.overflow import is_context_overflow, too_long_message
from timothy.providers.retry_after import parse_retry_after, throttled_message
from timothy.providers.sdk import importing
from timothy.providers.settings import BedrockSettings

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 10.0

_AUTH_CODES = {
    "UnrecognizedClientException",
    "InvalidSignatureException",
    "IncompleteSignatureException",
    "InvalidClientTokenId",
    "MissingAuthenticationTokenException",
    "MissingAuthenticationToken",
    "SignatureDoesNotMatch",
    "ExpiredTokenException",
    "ExpiredToken",
}
_THROTTLED_CODES = {"ThrottlingException", "TooManyRequestsException", "ModelNotReadyException"}
_SERVER_CODES = {
    "InternalServerException",
    "ServiceUnavailableException",
    "ModelErrorException",
    "ModelStreamErrorException",
}


def make_client(
    settings: BedrockSettings,
    *,
    read_timeout: float | None = None,
    service: str = "bedrock-runtime",
    endpoint_url: str | None = None,
) -> Any:
    """A bedrock-runtime client (or, with `service="bedrock"`, the control plane's, which
    lists models). Raises ProviderError when the profile or region is missing.

    The settings' `endpoint_url` is the runtime's; the control plane's is `endpoint_url`
    here, else botocore's own configuration (`AWS_ENDPOINT_URL_BEDROCK`), else the region's.
    """
    # boto3 takes about half a second to import: only once a client is made.
    with importing():
        import boto3
        import botocore.config
        import botocore.exceptions

    seconds = read_timeout if read_timeout is not None else settings.timeout_seconds
    try:
        session = boto3.session.Session(
            profile_name=settings.profile or None, region_name=settings.region or None
        )
    except botocore.exceptions.ProfileNotFound as exc:
        raise ProviderError(
            ErrorKind.NOT_CONFIGURED,
            f"The AWS profile '{settings.profile}' does not exist. Check the profile name in "
            "Settings, or leave it empty to use the default credentials.",
            detail=str(exc),
        ) from exc
    region = resolve_region(settings, session)
    if not region:
        raise ProviderError(ErrorKind.NOT_CONFIGURED, no_region_message(settings))
    config = botocore.config.Config(
        connect_timeout=min(CONNECT_TIMEOUT, seconds),
        read_timeout=seconds,
        retries={"total_max_attempts": 1, "mode": "standard"},
        user_agent_extra="timothy",
    )
    if service == "bedrock-runtime":
        endpoint_url = endpoint_url or settings.endpoint_url
    return session.client(
        service,
        region_name=region,
        config=config,
        endpoint_url=endpoint_url or None,
    )


def resolve_region(settings: BedrockSettings, session: Any) -> str | None:
    """The region Bedrock is called in: Settings, `AWS_REGION`, `AWS_DEFAULT_REGION`, the
    profile's `region` (the session already holds the last two, or Settings' when given)."""
    if settings.region:
        return settings.region
    from_env = os.environ.get("AWS_REGION", "").strip()
    if from_env:
        return from_env
    region = session.region_name
    return str(region) if region else None


def no_region_message(settings: BedrockSettings) -> str:
    """What was read for the region, in the owner's words, and how to set one."""
    profile = settings.profile or os.environ.get("AWS_PROFILE") or "default"
    config = os.environ.get("AWS_CONFIG_FILE") or "~/.aws/config"
    return (
        "No AWS region is set for Bedrock: Settings names none, AWS_REGION and "
        f"AWS_DEFAULT_REGION are not set, and the '{profile}' profile in {config} has no "
        "region. Choose one in Settings (for example us-east-1)."
    )


def region_of(client: Any) -> str:
    return str(client.meta.region_name)


@functools.cache
def _partitions() -> tuple[tuple[re.Pattern[str], frozenset[str]], ...]:
    """Each AWS partition's pattern of region names and the regions botocore lists in it."""
    with importing():
        import botocore.loaders

    data = botocore.loaders.create_loader().load_data("endpoints")
    return tuple(
        (re.compile(part["regionRegex"]), frozenset(part.get("regions", {})))
        for part in data.get("partitions", [])
    )


def region_name_fits(region: str) -> bool:
    """Whether `region` is shaped like a region of some AWS partition (us-east-1, cn-north-1):
    a typo ("us-east1", "Frankfurt") is not, and no network can reach it."""
    try:
        return any(pattern.match(region) for pattern, _ in _partitions())
    except Exception:  # no endpoint data: say nothing rather than something wrong
        log.debug("reading botocore's endpoint data failed", exc_info=True)
        return True


def known_regions() -> frozenset[str]:
    """The regions this botocore lists (a region newer than it is missing: only a hint)."""
    try:
        return frozenset().union(*(regions for _, regions in _partitions()))
    except Exception:
        log.debug("reading botocore's endpoint data failed", exc_info=True)
        return frozenset()


def translate(
    exc: Exception, *, model: str, region: str, what: str, timeout: float | None = None
) -> ProviderError:
    """One ProviderError with a plain message for any failure of boto3; detail to the log.
    `timeout` is the read bound the request ran under, named when it ran out."""
    if isinstance(exc, ProviderError):
        return exc
    with importing():
        import botocore.exceptions
        import urllib3.exceptions

    detail = f"{type(exc).__name__}: {exc}"
    log.warning("Bedrock %s (model %s, %s) failed: %s", what, model, region, detail)
    kind: ErrorKind
    retry_after = None
    if isinstance(exc, botocore.exceptions.ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        code = code[:1].upper() + code[1:]  # stream exceptions come as "throttlingException"
        text = str(error.get("Message", "")).lower()
        if code in _AUTH_CODES:
            kind = ErrorKind.AUTH
            if "expired" in code.lower() or "expired" in text:
                message = "Your AWS credentials have expired; refresh them (e.g. `aws sso login`)."
            else:
                message = "AWS refused the credentials. Check the profile or keys Timothy uses."
        elif code == "AccessDeniedException":
            kind = ErrorKind.ACCESS_DENIED
            message = (
                f"Your AWS account has no access to the model '{model}' in {region}. Enable it "
                "under Model access in the Bedrock console, or choose another region or model."
            )
        elif code == "ResourceNotFoundException":
            kind = ErrorKind.MODEL_NOT_FOUND
            message = f"Bedrock has no model '{model}' in {region}. Check the model id in Settings."
        elif code == "ValidationException" and "on-demand throughput" in text:
            kind = ErrorKind.MODEL_NOT_FOUND
            message = (
                f"The model '{model}' is only offered through an inference profile in {region}; "
                f"use the profile id instead (for example 'us.{model}')."
            )
        elif code == "ValidationException" and ("model identifier" in text or "model id" in text):
            kind = ErrorKind.MODEL_NOT_FOUND
            message = f"Bedrock has no model '{model}' in {region}. Check the model id in Settings."
        elif code == "ValidationException" and ("too long" in text or is_context_overflow(text)):
            kind = ErrorKind.CONTEXT_TOO_LONG
            message = too_long_message(model, text)
        elif code in _THROTTLED_CODES:
            kind = ErrorKind.THROTTLED
            retry_after = _retry_after(exc.response)
            message = throttled_message("Bedrock", retry_after)
        elif code == "ServiceQuotaExceededException":
            kind = ErrorKind.QUOTA
            message = f"This request exceeds your account's Bedrock quota for '{model}'."
        elif code == "ModelTimeoutException":
            kind = ErrorKind.TIMEOUT
            message = f"The model '{model}' took too long to answer."
        elif code in _SERVER_CODES:
            kind = ErrorKind.SERVER
            message = "Bedrock had an internal error; try again later."
        elif code == "ValidationException":
            kind = ErrorKind.BAD_REQUEST
            message = "Bedrock refused the request as invalid (details are in the log)."
        else:
            kind = ErrorKind.UNKNOWN
            message = f"Bedrock failed with {code or 'an unknown error'} (details are in the log)."
    elif isinstance(
        exc, botocore.exceptions.ReadTimeoutError | urllib3.exceptions.ReadTimeoutError
    ):
        kind = ErrorKind.TIMEOUT
        within = f"within {timeout:g} s" if timeout is not None else "in time"
        message = f"Bedrock did not answer {within} ({region})."
    elif isinstance(
        exc, botocore.exceptions.ConnectionError | botocore.exceptions.ConnectTimeoutError
    ) and not region_name_fits(region):
        kind = ErrorKind.NOT_CONFIGURED
        message = (
            f"'{region}' is not an AWS region's name (they look like us-east-1 or "
            "eu-central-1). Check the region in Settings."
        )
    elif isinstance(exc, botocore.exceptions.ConnectTimeoutError):
        kind = ErrorKind.UNREACHABLE
        message = f"Could not reach Amazon Bedrock in {region} (the connection timed out)."
    elif isinstance(
        exc,
        botocore.exceptions.ConnectionError
        | botocore.exceptions.HTTPClientError
        | urllib3.exceptions.HTTPError,
    ):
        kind = ErrorKind.UNREACHABLE
        message = f"Could not reach Amazon Bedrock in {region}; check the network connection."
        listed = known_regions()
        if listed and region not in listed:
            message += f" Check the region's name too: this computer does not know {region}."
    elif isinstance(
        exc,
        botocore.exceptions.NoCredentialsError
        | botocore.exceptions.PartialCredentialsError
        | botocore.exceptions.CredentialRetrievalError
        | botocore.exceptions.TokenRetrievalError
        | botocore.exceptions.SSOError,
    ):
        kind = ErrorKind.AUTH
        message = (
            "No usable AWS credentials were found. Sign in with the AWS CLI (`aws configure` or "
            "`aws sso login`), or name a profile in Settings."
        )
    elif isinstance(exc, botocore.exceptions.NoRegionError):
        kind = ErrorKind.NOT_CONFIGURED
        message = "No AWS region is set for Bedrock. Choose one in Settings."
    elif isinstance(exc, botocore.exceptions.ParamValidationError):
        kind = ErrorKind.BAD_REQUEST
        message = "Bedrock refused the request as invalid (details are in the log)."
    else:
        kind = ErrorKind.UNKNOWN
        message = "Bedrock failed unexpectedly (details are in the log)."
    return ProviderError(kind, message, detail=detail, retry_after=retry_after)


def _retry_after(response: dict[str, Any]) -> float | None:
    """The wait a throttled answer asked for in a `Retry-After` header, if it gave one (an
    exception inside a stream has no headers of its own)."""
    headers = response.get("ResponseMetadata", {}).get("HTTPHeaders", {})
    return parse_retry_after(headers, now=datetime.now(UTC))
