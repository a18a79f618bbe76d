"""What the provider tests share: a tool, a system prompt with its cache boundary, a quick
backoff, and one way to build either chat provider against its fake server."""

from __future__ import annotations

from tests.fakes.bedrock_server import BedrockServer
from tests.fakes.openai_server import OpenAIServer
from timothy.providers.backoff import Backoff
from timothy.providers.base import ChatProvider, SystemBlock, ToolSpec
from timothy.providers.bedrock_chat import BedrockChat
from timothy.providers.openai_chat import OpenAIChat

REMEMBER = ToolSpec(
    "remember",
    "Save a fact about the owner.",
    {"type": "object", "properties": {"content": {"type": "string"}}, "required": ["content"]},
)
SYSTEM = [SystemBlock("You are Timothy.", cache_after=True), SystemBlock("<memory>…</memory>")]
FAST = Backoff(first_delay=0.02, max_delay=0.1, total_seconds=2.0)


ChatServer = OpenAIServer | BedrockServer


def openai_chat(server: OpenAIServer, **settings: object) -> OpenAIChat:
    return OpenAIChat(server.settings(**settings), backoff=FAST)


def bedrock_chat(server: BedrockServer, **settings: object) -> BedrockChat:
    return BedrockChat(server.settings(**settings), backoff=FAST)


def chat_for(server: ChatServer, **settings: object) -> ChatProvider:
    """The chat provider that speaks `server`'s wire protocol."""
    if isinstance(server, OpenAIServer):
        return openai_chat(server, **settings)
    return bedrock_chat(server, **settings)
