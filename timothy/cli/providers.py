"""`timothy providers ...`: check the configured chat and embedding providers, store API keys."""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from timothy.cli.context import Context, add_json
from timothy.errors import InvalidInputError
from timothy.providers.checks import check_providers
from timothy.secrets import OPENAI_API_KEY, set_secret
from timothy.settings import load_settings

_KEY_NAMES = {"openai": OPENAI_API_KEY}


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    group = sub.add_parser("providers", parents=[common], help="check chat and embedding providers")
    psub = group.add_subparsers(dest="providers_command", metavar="ACTION")

    p = psub.add_parser(
        "test",
        parents=[common],
        help="send one small request to each configured provider: model, latency or the error",
    )
    add_json(p)
    p.set_defaults(handler=cmd_test)

    p = psub.add_parser(
        "set-key",
        parents=[common],
        help="store a provider's API key in the system keyring (read from stdin or a prompt)",
    )
    p.add_argument("provider", choices=sorted(_KEY_NAMES))
    p.add_argument("--delete", action="store_true", help="remove the stored key instead")
    p.set_defaults(handler=cmd_set_key)


def cmd_test(ctx: Context) -> int:
    results = check_providers(load_settings())
    if ctx.json:
        ctx.print_json([result.to_json() for result in results])
    else:
        for result in results:
            ctx.print(result.line())
    return 0 if all(result.ok for result in results) else 1


def cmd_set_key(ctx: Context) -> int:
    name = _KEY_NAMES[ctx.args.provider]
    if ctx.args.delete:
        set_secret(name, None)
        ctx.print(f"The {ctx.args.provider} key was removed from the keyring.")
        return 0
    if sys.stdin.isatty():
        key = getpass.getpass(f"{ctx.args.provider} API key (not shown): ")
    else:
        key = sys.stdin.readline()
    key = key.strip()
    if not key:
        raise InvalidInputError("No key was given; nothing was stored.")
    set_secret(name, key)
    ctx.print(f"The {ctx.args.provider} key is stored in the system keyring.")
    return 0
