// node parse.cjs TYPES.js FRAMES.jsonl: every line of FRAMES (one frame's JSON) through
// the `toFrame` quicktype generated with --runtime-typecheck; prints one JSON line
// {"frames": N, "failures": [{"line": L, "error": "..."}]}.
const fs = require("fs");
const path = require("path");
const { toFrame } = require(path.resolve(process.argv[2]));
const lines = fs.readFileSync(process.argv[3], "utf8").split("\n").filter((l) => l.trim());
const failures = [];
lines.forEach((line, i) => {
  try {
    toFrame(line);
  } catch (e) {
    failures.push({ line: i + 1, error: String(e.message).slice(0, 300) });
  }
});
console.log(JSON.stringify({ frames: lines.length, failures }));
