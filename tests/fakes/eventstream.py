"""The AWS event-stream binary framing, written the way Bedrock's ConverseStream sends it.

A message: prelude (total length, headers length, CRC32 of those 8 bytes), headers, payload,
then a CRC32 of everything before it. Header values here are all strings (type 7).
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

STRING = 7


def encode_headers(headers: dict[str, str]) -> bytes:
    out = b""
    for name, value in headers.items():
        raw_name, raw_value = name.encode(), value.encode()
        out += struct.pack("!B", len(raw_name)) + raw_name
        out += struct.pack("!BH", STRING, len(raw_value)) + raw_value
    return out


def encode_message(headers: dict[str, str], payload: bytes) -> bytes:
    raw_headers = encode_headers(headers)
    total = 12 + len(raw_headers) + len(payload) + 4
    prelude = struct.pack("!II", total, len(raw_headers))
    message = prelude + struct.pack("!I", zlib.crc32(prelude)) + raw_headers + payload
    return message + struct.pack("!I", zlib.crc32(message))


def event(event_type: str, body: dict[str, Any]) -> bytes:
    """An `event` message of the given type with a JSON payload."""
    return encode_message(
        {
            ":event-type": event_type,
            ":content-type": "application/json",
            ":message-type": "event",
        },
        json.dumps(body).encode(),
    )


def exception(exception_type: str, message: str) -> bytes:
    """A modelled exception in the stream, e.g. `throttlingException`."""
    return encode_message(
        {
            ":exception-type": exception_type,
            ":content-type": "application/json",
            ":message-type": "exception",
        },
        json.dumps({"message": message}).encode(),
    )
