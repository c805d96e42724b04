import type { AdminClient } from '@platform/client';
import type { GatewayStores } from '@platform/gateway/keys.store';

/** What the commands reach: each opened on first use, so a command loads only what it needs. */
export interface CliDeps {
  /** The admin API's client (@platform/client); rejects when PLATFORM_ADMIN_TOKEN is not set. */
  admin: () => Promise<AdminClient>;
  /** The gateway's stores, for `demo-seed` only. */
  stores: () => Promise<GatewayStores>;
  /** Applies the gateway's migrations. */
  migrate: () => Promise<{ applied: string[]; skipped: string[] }>;
}

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** What every command is built with. */
export interface CommandContext {
  deps: CliDeps;
  io: CliIo;
  /** Prints a value as indented JSON on stdout. */
  print: (value: unknown) => void;
}
