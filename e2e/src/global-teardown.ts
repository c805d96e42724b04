// Runs after the tests whatever their outcome: every process the setup started is stopped.
import type { Platform } from '@platform/testing';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __E2E_PLATFORM__?: Platform }).__E2E_PLATFORM__?.stop();
}
