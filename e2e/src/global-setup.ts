// Starts the platform once for every e2e test file; the tests find it through these variables.
import { startPlatform } from './platform';

export default async function globalSetup(): Promise<void> {
  const platform = await startPlatform();
  (globalThis as { __E2E_PLATFORM__?: unknown }).__E2E_PLATFORM__ = platform;
  process.env.E2E_GATEWAY_URL = platform.gatewayUrl;
  process.env.E2E_ADMIN_TOKEN = platform.adminToken;
}
