// Starts the platform once for every e2e test file; the tests find it through these variables.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startE2ePlatform } from './platform';

/**
 * The browser: `npm test` found (or installed) it and passes CHROMIUM_PATH; run alone (`npx jest`),
 * the suite asks the same discovery in scripts/platform.mjs, so a missing browser stops here in one
 * line before the platform starts.
 */
function chromiumPath(): string {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  try {
    return execFileSync(process.execPath, [join(__dirname, '..', '..', 'scripts', 'platform.mjs'), 'browser'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch (err) {
    const { stderr } = err as { stderr?: string };
    throw new Error((stderr ?? '').trim().split('\n').at(-1) || (err as Error).message, { cause: err });
  }
}

export default async function globalSetup(): Promise<void> {
  process.env.CHROMIUM_PATH = chromiumPath();
  const platform = await startE2ePlatform();
  (globalThis as { __E2E_PLATFORM__?: unknown }).__E2E_PLATFORM__ = platform;
  process.env.E2E_GATEWAY_URL = platform.gatewayUrl;
  process.env.E2E_ADMIN_TOKEN = platform.adminToken;
}
