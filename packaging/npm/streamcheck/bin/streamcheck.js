#!/usr/bin/env node
// Runs the streamcheck binary of this machine's platform package (@streamcheck/OS-CPU: an
// optionalDependency whose `os` and `cpu` npm matches, so only that one is installed) with
// this process's arguments, stdio and exit status.
"use strict";
const { spawnSync } = require("node:child_process");

const platform = `${process.platform}-${process.arch}`;
let binary;
try {
  binary = require.resolve(`@streamcheck/${platform}/bin/streamcheck`);
} catch {
  console.error(
    `streamcheck: no prebuilt binary for ${platform} (npm installs @streamcheck/${platform} ` +
      "only where one is published, and not with --omit=optional or --no-optional); " +
      "build one with `cargo install --locked --git URL streamcheck`",
  );
  process.exit(2);
}
const ran = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (ran.error) {
  console.error(`streamcheck: cannot start ${binary}: ${ran.error.message}`);
  process.exit(2);
}
if (ran.signal) {
  process.kill(process.pid, ran.signal);
}
process.exit(ran.status ?? 2);
