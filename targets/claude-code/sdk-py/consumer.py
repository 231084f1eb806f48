"""Feeds each stream-json line on stdin to the Python Agent SDK's own message parser, as
its Query does: control frames are routed before parsing (it answers or drops them),
every other frame goes to `parse_message`. Prints one JSON object per frame: its type
and the class it parsed into (null: the SDK skips it). A frame the SDK cannot parse
raises, and the traceback ends the process with exit 1, as it ends the SDK's generator.

`--serve`: many feeds to one process (`streamcheck consume` starts one per job). Each feed
is a header line {"lines": K} and the K lines as the CLI wrote them; the answer is one line
on stdout, {"ok": true, "understood": N} or {"ok": false, "at_line": L, "error": "..."} (the
1-based line it raised on). What a frame prints goes nowhere in this mode."""
import json
import sys

import claude_agent_sdk
from claude_agent_sdk._internal.message_parser import parse_message

ROUTED = {"control_response", "control_request", "control_cancel_request", "transcript_mirror"}

if sys.argv[1:] == ["--version"]:
    print(claude_agent_sdk.__version__)
    sys.exit(0)



def consume(line):
    """The object printed for one line; raises when the SDK cannot parse it."""
    frame = json.loads(line)
    kind = frame.get("type") if isinstance(frame, dict) else None
    if kind in ROUTED:
        return {"type": kind, "routed": True}
    message = parse_message(frame)
    return {"type": kind, "parsed": type(message).__name__ if message is not None else None}


def serve():
    while True:
        header = sys.stdin.readline()
        if not header:
            return
        lines = [sys.stdin.readline() for _ in range(json.loads(header)["lines"])]
        answer = {"ok": True, "understood": 0}
        for at, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                consume(line)
                answer["understood"] += 1
            except Exception as e:  # what ends the one-shot consumer with exit 1
                answer = {"ok": False, "at_line": at, "error": f"{type(e).__name__}: {e}"[:500]}
                break
        print(json.dumps(answer), flush=True)


if sys.argv[1:] == ["--serve"]:
    serve()
    sys.exit(0)

for line in sys.stdin:
    if line.strip():
        print(json.dumps(consume(line)))
