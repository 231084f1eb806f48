"""Feeds each stream-json line on stdin to the Python Agent SDK's own message parser, as
its Query does: control frames are routed before parsing (it answers or drops them),
every other frame goes to `parse_message`. Prints one JSON object per frame: its type
and the class it parsed into (null: the SDK skips it). A frame the SDK cannot parse
raises, and the traceback ends the process with exit 1, as it ends the SDK's generator."""
import json
import sys

import claude_agent_sdk
from claude_agent_sdk._internal.message_parser import parse_message

ROUTED = {"control_response", "control_request", "control_cancel_request", "transcript_mirror"}

if sys.argv[1:] == ["--version"]:
    print(claude_agent_sdk.__version__)
    sys.exit(0)

for line in sys.stdin:
    if not line.strip():
        continue
    frame = json.loads(line)
    kind = frame.get("type") if isinstance(frame, dict) else None
    if kind in ROUTED:
        print(json.dumps({"type": kind, "routed": True}))
        continue
    message = parse_message(frame)
    print(json.dumps({"type": kind, "parsed": type(message).__name__ if message is not None else None}))
