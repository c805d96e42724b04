// Starts the built platform once for the client's integration tests; they find it through these variables.
import { randomBytes } from 'node:crypto';
import { startPlatform } from '@platform/testing';

export default async function globalSetup(): Promise<void> {
  const platform = await startPlatform({
    // Databases of its own: other checkouts may test on the same server.
    name: `client_${randomBytes(4).toString('hex')}`,
    seed: false,
    readyPath: '/readyz',
    env: {
      // The webhook test's receiver listens on 127.0.0.1.
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOKS_RELAY_POLL_MS: '100',
      WEBHOOKS_RETRY_SCHEDULE_MS: '500,1000',
    },
  });
  (globalThis as { __CLIENT_PLATFORM__?: unknown }).__CLIENT_PLATFORM__ = platform;
  process.env.CLIENT_TEST_GATEWAY_URL = platform.gatewayUrl;
  process.env.CLIENT_TEST_ADMIN_TOKEN = platform.adminToken;
}
