// Runs after the tests whatever their outcome: every process the setup started is stopped, its databases dropped.
import type { Platform } from '@platform/testing';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __CLIENT_PLATFORM__?: Platform }).__CLIENT_PLATFORM__?.stop();
}
