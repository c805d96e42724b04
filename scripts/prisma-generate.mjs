#!/usr/bin/env node
// `prisma generate` for the package in the current directory.
// Prisma 7's CLI wants a schema-engine binary even for generate, which never runs it; where the
// engine cannot be downloaded (offline CI) any existing executable satisfies the check.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(`${process.cwd()}/package.json`);
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
const cli = require.resolve('prisma/build/index.js');
const result = spawnSync(process.execPath, [cli, 'generate', ...process.argv.slice(2)], { stdio: 'inherit', env });
process.exit(result.status ?? 1);
