""" "Test connection": one cheap, real request to the chosen chat provider (runs on a worker).

`check_connection` is the only thing the settings dialog calls. Until the providers
factory lands it talks to the vendors' clients directly; then its body becomes one call
to the factory's provider, and nothing else changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from timothy.errors import ProviderError
from timothy.settings import Settings

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_SECONDS = 15.0

ConnectionCheck = Callable[[Settings, "str | None"], str]


def _openai(settings: Settings, api_key: str | None) -> str:
    import openai

    base_url = settings.openai.base_url or None
    client = openai.OpenAI(
        api_key=api_key or ("not-needed" if base_url else None),
        base_url=base_url,
        timeout=CONNECT_TIMEOUT_SECONDS,
        max_retries=0,
    )
    where = base_url or "OpenAI"
    try:
        models = [model.id for model in client.models.list()]
    except openai.AuthenticationError as exc:
        raise ProviderError(f"{where} refused the API key. Check it and try again.") from exc
    except openai.APIConnectionError as exc:
        raise ProviderError(
            f"Could not reach {where}. Is the address right and the server running?"
        ) from exc
    except openai.APIStatusError as exc:
        raise ProviderError(f"{where} answered with an error ({exc.status_code}).") from exc
    wanted = settings.openai.chat_model
    if models and wanted not in models:
        return (
            f"Connected to {where}, but it does not list the model “{wanted}”. "
            f"It offers: {', '.join(sorted(models)[:6])}{'…' if len(models) > 6 else ''}."
        )
    return f"Connected to {where}; the model “{wanted}” is available."


def _bedrock(settings: Settings, _api_key: str | None) -> str:
    import boto3
    import botocore.config
    import botocore.exceptions

    bedrock = settings.bedrock
    try:
        session = boto3.Session(
            profile_name=bedrock.profile or None, region_name=bedrock.region or None
        )
        client = session.client(
            "bedrock-runtime",
            config=botocore.config.Config(
                connect_timeout=CONNECT_TIMEOUT_SECONDS,
                read_timeout=CONNECT_TIMEOUT_SECONDS,
                retries={"max_attempts": 1},
            ),
        )
        client.converse(
            modelId=bedrock.chat_model,
            messages=[{"role": "user", "content": [{"text": "Reply with OK."}]}],
            inferenceConfig={"maxTokens": 5},
        )
    except botocore.exceptions.ProfileNotFound as exc:
        raise ProviderError(f"There is no AWS profile named “{bedrock.profile}”.") from exc
    except botocore.exceptions.NoRegionError as exc:
        raise ProviderError("Choose an AWS region (for example us-east-1).") from exc
    except botocore.exceptions.NoCredentialsError as exc:
        raise ProviderError(
            "No AWS credentials were found. Sign in with the AWS CLI or choose a profile."
        ) from exc
    except botocore.exceptions.ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        message = exc.response.get("Error", {}).get("Message", "")
        log.info("bedrock connection test failed: %s %s", code, message)
        if code in ("AccessDeniedException", "UnrecognizedClientException"):
            raise ProviderError(
                f"AWS refused access to “{bedrock.chat_model}”. Check the credentials and that "
                "the model is enabled for your account in this region."
            ) from exc
        if code in ("ValidationException", "ResourceNotFoundException"):
            raise ProviderError(
                f"Bedrock does not know the model “{bedrock.chat_model}” here."
            ) from exc
        raise ProviderError(f"Bedrock answered with an error ({code or 'unknown'}).") from exc
    except botocore.exceptions.BotoCoreError as exc:
        raise ProviderError(f"Could not reach Bedrock: {exc}") from exc
    return f"Connected to Bedrock; “{bedrock.chat_model}” answered."


def check_connection(settings: Settings, api_key: str | None) -> str:
    """A sentence saying the provider answered; raises ProviderError with one that says why not."""
    if settings.chat_provider == "openai":
        return _openai(settings, api_key)
    if settings.chat_provider == "bedrock":
        return _bedrock(settings, api_key)
    raise ProviderError("Choose a chat provider first.")
