// @instantlyeasy/claude-code-sdk-ts as its README's Quick Start uses it, for
// `streamcheck consume --sdk claude-code-sdk-ts`: one query, its text printed. The `claude`
// it starts is ../bin/claude (the feed). Usage: node driver.mjs PACKAGE_DIR
import { join } from 'node:path';

const { claude } = await import(join(process.argv[2], 'dist/index.js'));
const response = await claude().query('Say "Hello World!"').asText();
console.log(response);
