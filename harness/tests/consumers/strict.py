"""A strict stream-json consumer: exits 1 on the first frame whose `type` it does not know,
as the Python Agent SDK 0.1.38 did on `rate_limit_event`. Prints one JSON object per
frame it understood. `--without TYPE` forgets a type (a parser written before it came)."""
import json
import sys

KNOWN = {
    "system", "assistant", "user", "result", "stream_event", "rate_limit_event",
    "control_request", "control_response", "control_cancel_request", "conversation_reset",
}

args = sys.argv[1:]
while args[:1] == ["--without"]:
    KNOWN.discard(args[1])
    args = args[2:]

for n, line in enumerate(sys.stdin, 1):
    frame = json.loads(line)
    kind = frame.get("type")
    if kind not in KNOWN:
        print(f"line {n}: unknown message type {kind!r}", file=sys.stderr)
        sys.exit(1)
    print(json.dumps({"type": kind}))
