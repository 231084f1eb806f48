"""A tolerant stream-json consumer: reads what it knows and skips the rest (unknown types,
keys and blocks), as a forward-compatible parser should. Prints one JSON object per frame
it understood."""
import json
import sys

for line in sys.stdin:
    frame = json.loads(line)
    kind = frame.get("type")
    if kind == "assistant":
        content = (frame.get("message") or {}).get("content")
        blocks = content if isinstance(content, list) else []
        text = "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        print(json.dumps({"type": kind, "text_chars": len(text)}))
    elif kind in ("system", "user", "result", "stream_event", "control_request", "control_response"):
        print(json.dumps({"type": kind}))
