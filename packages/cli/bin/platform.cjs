#!/usr/bin/env node
// The `platform` command. Committed, unlike dist/, so that pnpm can link it on a fresh clone before
// anything is built (it warned "Failed to create bin" once per package).
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const cli = join(__dirname, '..', 'dist', 'main.js');
if (!existsSync(cli)) {
  process.stderr.write('platform: the CLI is not built yet; run `npm run build` (or `npm start`) in the repository first.\n');
  process.exit(1);
}
require(cli);
