"""`timothy chat` runs one turn headless and streams the reply to stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO, run_timothy
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.script import call
from timothy.settings import Settings, save_settings
from timothy.store import Store


def test_chat_streams_the_reply_and_remembers(store: Store, openai_server: OpenAIServer) -> None:
    save_settings(Settings(chat_provider="openai", openai=openai_server.settings()))
    openai_server.reply(
        tool_calls=[call("remember", {"content": "The owner's car is a 2012 Volvo"})]
    )
    openai_server.reply("Got it, I'll remember your Volvo.")
    result = run_timothy(
        "chat", "--new", "Remember", "that", "my", "car", "is", "a", "2012", "Volvo"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Got it, I'll remember your Volvo.\n"
    assert "Remembered: The owner's car is a 2012 Volvo" in result.stderr
    [memory] = store.memories.list(status="active")
    assert memory.content == "The owner's car is a 2012 Volvo"

    listed = run_timothy("sessions", "list", "--json")
    [session] = [json.loads(line) for line in listed.stdout.splitlines()]
    openai_server.reply("Yes: a 2012 Volvo.")
    again = run_timothy("chat", input="What car do I drive?\n")  # continues the latest
    assert again.returncode == 0, again.stderr
    assert again.stdout == "Yes: a 2012 Volvo.\n"
    shown = json.loads(run_timothy("sessions", "show", session["id"], "--json").stdout)
    assert [m["role"] for m in shown["messages"]][-2:] == ["user", "assistant"]
    assert "2012 Volvo" in shown["messages"][-1]["memory_block"]


def test_chat_without_a_provider_says_what_to_do() -> None:
    result = run_timothy("chat", "hello")
    assert result.returncode == 1
    assert "No chat provider is set up" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_message_that_is_not_utf8_is_refused_before_anything_is_written(
    store: Store, openai_server: OpenAIServer
) -> None:
    """Bytes that are not UTF-8 reach the command as lone surrogates (an argument, or stdin
    in the C locale): the turn made a conversation, then failed to store the message with
    "unexpected error", leaving an empty "(untitled)" conversation each time."""
    save_settings(Settings(chat_provider="openai", openai=openai_server.settings()))
    refused = (
        "timothy: This message holds broken characters (text that is not UTF-8) and cannot "
        "be sent.\n"
    )
    result = run_timothy("chat", "--new", os.fsdecode(b"caf\xe9 au lait"))
    assert (result.returncode, result.stderr) == (1, refused)
    for errors in ("surrogateescape", "strict"):  # the C locale's stdin, and a UTF-8 locale's
        piped = subprocess.run(
            [sys.executable, "-m", "app", "chat", "--new"],
            input=b"caf\xe9 au lait\n",
            capture_output=True,
            timeout=60,
            env={**os.environ, "PYTHONIOENCODING": f"utf-8:{errors}"},
            cwd=REPO,
        )
        assert (piped.returncode, piped.stderr.decode()) == (1, refused)
    assert store.sessions.list() == []
    assert openai_server.chat_requests == []


def test_chat_with_the_provider_down_keeps_the_message(
    store: Store, openai_server: OpenAIServer
) -> None:
    save_settings(Settings(chat_provider="openai", openai=openai_server.settings(retry_seconds=1)))
    openai_server.fail(500, times=None)
    result = run_timothy("chat", "--new", "are you there?")
    assert result.returncode == 1
    assert "message was kept" in result.stderr
    [session] = store.sessions.list()
    assert [m.content for m in store.sessions.messages(session.id)] == ["are you there?"]
