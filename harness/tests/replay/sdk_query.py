"""The Python Agent SDK's own query() with cli_path pointed at `streamcheck replay-cli`
over saved trials: prints one JSON object per trial, whether the SDK completed and
yielded the recorded result. Usage: sdk_query.py STREAMCHECK WORKDIR TRIAL.json..."""
import asyncio
import json
import os
import stat
import sys

from claude_agent_sdk import ClaudeAgentOptions, PermissionResultAllow, ResultMessage, query


def recorded_result(trial):
    for line in trial["stdout"].splitlines():
        frame = json.loads(line)
        if frame.get("type") == "result":
            return frame
    return None


async def one(streamcheck, workdir, path):
    trial = json.load(open(path))
    wrapper = os.path.join(workdir, os.path.basename(path) + ".sh")
    with open(wrapper, "w") as f:
        probe = os.environ.get("REPLAY_PROBE")
        probe = f" --probe {probe}" if probe else ""
        f.write(f"#!/bin/sh\nexec '{streamcheck}' replay-cli --wait 20{probe} --trial '{path}' -- \"$@\"\n")
    os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IEXEC)
    want = recorded_result(trial)
    got = None
    async def allow(tool, input, context):
        return PermissionResultAllow()

    async def prompt():
        yield {"type": "user", "message": {"role": "user", "content": "replayed"}}

    # A streamed prompt and a can_use_tool callback: the SDK keeps stdin open until the
    # result and answers the recorded can_use_tool requests itself.
    options = ClaudeAgentOptions(cli_path=wrapper, cwd=workdir, can_use_tool=allow)
    try:
        async for message in query(prompt=prompt(), options=options):
            if isinstance(message, ResultMessage):
                got = message
    except Exception as e:  # the SDK failed: that is the finding
        return {"trial": path, "ok": False, "why": f"{type(e).__name__}: {e}"}
    if got is None:
        return {"trial": path, "ok": False, "why": "no ResultMessage"}
    same = (got.subtype, got.is_error, got.result, got.session_id) == (
        want["subtype"], want["is_error"], want.get("result"), want["session_id"])
    return {"trial": path, "ok": same, "why": "" if same else f"got {got.subtype}/{got.result!r}"}


async def main():
    streamcheck, workdir, trials = sys.argv[1], sys.argv[2], sys.argv[3:]
    for path in trials:
        print(json.dumps(await asyncio.wait_for(one(streamcheck, workdir, path), 120)), flush=True)


asyncio.run(main())
