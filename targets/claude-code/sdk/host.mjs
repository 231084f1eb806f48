// The TypeScript Agent SDK as a host, for `streamcheck consume --sdk typescript`: its own
// query() with pathToClaudeCodeExecutable pointed at `streamcheck replay-cli`, one saved
// trial at a time. Usage: node host.mjs SDK_DIR STREAMCHECK. Reads one JSON request per
// line on stdin, {"trial": PATH, "probe": NAME | null, "cwd": DIR, "timeout_ms": N}, and answers each with one
// line: {"ok": true, "result": {...} | null, "messages": N} when query() completed (result:
// the last ResultMessage it yielded), {"ok": false, "error": "...", "result": ..., "messages": N}
// when it threw or hung.
import { createInterface } from 'node:readline';
import { writeFileSync, chmodSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const [sdkDir, streamcheck] = process.argv.slice(2);
const { query } = await import(join(sdkDir, 'sdk.mjs'));

// One wrapper for every trial: the SDK passes REPLAY_TRIAL (and REPLAY_PROBE) in the CLI's
// environment.
const wrapper = join(mkdtempSync(join(tmpdir(), 'streamcheck-host-')), 'claude');
writeFileSync(
  wrapper,
  `#!/bin/sh\nexec '${streamcheck.replace(/'/g, `'\\''`)}' replay-cli --wait 10 --trial "$REPLAY_TRIAL" \${REPLAY_PROBE:+--probe "$REPLAY_PROBE"} -- "$@"\n`,
);
chmodSync(wrapper, 0o755);

async function one(req) {
  const seen = { messages: 0, result: null };
  const abort = new AbortController();
  const prompt = (async function* () {
    yield { type: 'user', message: { role: 'user', content: 'replayed' }, parent_tool_use_id: null, session_id: '' };
  })();
  const options = {
    pathToClaudeCodeExecutable: wrapper,
    cwd: req.cwd,
    env: { PATH: process.env.PATH, HOME: req.cwd, REPLAY_TRIAL: req.trial, REPLAY_PROBE: req.probe ?? '' },
    abortController: abort,
    // A callback keeps stdin open until the result, and answers recorded can_use_tool requests.
    canUseTool: async (_name, input) => ({ behavior: 'allow', updatedInput: input }),
    stderr: () => {},
  };
  const timer = setTimeout(() => abort.abort(), req.timeout_ms ?? 30000);
  try {
    for await (const m of query({ prompt, options })) {
      seen.messages += 1;
      if (m.type === 'result') {
        seen.result = { subtype: m.subtype, is_error: m.is_error, result: m.result ?? null, session_id: m.session_id };
      }
    }
    return { ok: true, ...seen };
  } catch (e) {
    const why = abort.signal.aborted ? `no end within ${req.timeout_ms ?? 30000} ms` : String(e?.message ?? e);
    return { ok: false, error: why.split('\n')[0].slice(0, 500), ...seen };
  } finally {
    clearTimeout(timer);
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  process.stdout.write(JSON.stringify(await one(JSON.parse(line))) + '\n');
}
