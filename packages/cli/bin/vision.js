#!/usr/bin/env node
// The `vision` command (packages/cli/src/main.ts, compiled by `npm run build`).
require('../dist/main.js').main(process.argv.slice(2));
