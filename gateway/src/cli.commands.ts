import { parseArgs } from 'node:util';
import { PlatformApiError, unwrap, type AdminClient } from '@platform/client';
import { isTransientBackendError, QUOTA_NAMES, type QuotaName } from '@platform/core';
import type { GatewayStores } from './keys.store';
import { demoSeed } from './keys.service';

/** `scheduled_pipelines` → `scheduled-pipelines`: a quota's option name. */
const quotaOption = (name: QuotaName): string => name.replaceAll('_', '-');

export const USAGE = `usage: platform <command>
  workspaces create --name NAME
  workspaces list [--limit N] [--cursor C]
  keys create --workspace ID --name NAME [--scopes a,b] [--expires-at RFC3339] [--rate-limits bucket=N,...]
  keys list --workspace ID [--limit N] [--cursor C]
  keys update --workspace ID --key KEY_ID [--name NAME] [--scopes a,b | --unrestricted] [--rate-limits bucket=N,... | --default-limits]
  keys roll --workspace ID --key KEY_ID [--expires-in SECONDS]   (default 86400: the old token's overlap)
  keys usage --workspace ID --key KEY_ID [--from RFC3339] [--to RFC3339] [--granularity hour|day]
  keys revoke --workspace ID --key KEY_ID
  quotas show --workspace ID
  quotas set --workspace ID ${QUOTA_NAMES.map((name) => `[--${quotaOption(name)} N|default]`).join(' ')}
  migrate
  demo-seed
The workspaces, keys and quotas commands call the admin API of the gateway at PLATFORM_URL (default http://127.0.0.1:8080)
with PLATFORM_ADMIN_TOKEN; migrate and demo-seed work on the gateway's database (GATEWAY_DATABASE_URL; migrate on
GATEWAY_DIRECT_DATABASE_URL when it is set, past a transaction-mode pooler).`;

export interface CliDeps {
  /** The admin API's client (@platform/client); throws when PLATFORM_ADMIN_TOKEN is not set. */
  admin: () => AdminClient;
  /** The gateway's database, for `demo-seed` only. */
  store: () => GatewayStores;
  migrate: () => Promise<{ applied: string[]; skipped: string[] }>;
}

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

class UsageError extends Error {}

/** `a,b` → ['a', 'b']. */
function commaList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `events=50,pipelines=10` → { events: 50, pipelines: 10 }; a value that is not a whole number stays text so the API names it. */
function rateLimitsArg(value: string): Record<string, unknown> {
  return Object.fromEntries(
    commaList(value).map((pair) => {
      const at = pair.indexOf('=');
      const bucket = (at === -1 ? pair : pair.slice(0, at)).trim();
      const limit = at === -1 ? '' : pair.slice(at + 1).trim();
      return [bucket, /^\d{1,15}$/.test(limit) ? Number(limit) : limit];
    }),
  );
}

/** A whole number stays a number; anything else is sent as it is, so the API's validation names it. */
const numberArg = (value: string | undefined): unknown => (value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : value);

/** The quotas given as options: `default` is null (the platform default), a number is sent as such. */
function quotasArg(values: Record<string, unknown>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const name of QUOTA_NAMES) {
    const value = values[quotaOption(name)] as string | undefined;
    if (value !== undefined) body[name] = value === 'default' ? null : numberArg(value);
  }
  return body;
}

/** Exactly one of a value option and the flag that means "none of it" (`--scopes`/`--unrestricted`). */
function valueOrNull<T>(value: string | undefined, none: boolean | undefined, parseValue: (v: string) => T, names: string): T | null | undefined {
  if (value !== undefined && none) throw new UsageError(`use one of ${names}`);
  if (none) return null;
  return value === undefined ? undefined : parseValue(value);
}

function required(value: string | undefined, option: string): string {
  if (value === undefined) throw new UsageError(`${option} is required`);
  return value;
}

/**
 * The `platform` command: the admin API's operations over HTTP with the admin client (so a key
 * change takes the gateway's one path: saved, evicted and announced to every instance), plus the
 * database-only `migrate` and `demo-seed`. Prints JSON; returns the exit code (0 ok, 1 failed, 2 usage).
 */
export async function runCli(argv: string[], deps: CliDeps, io: CliIo): Promise<number> {
  const print = (value: unknown): void => io.out(JSON.stringify(value, null, 2));
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        name: { type: 'string' },
        workspace: { type: 'string' },
        key: { type: 'string' },
        scopes: { type: 'string' },
        'expires-at': { type: 'string' },
        'expires-in': { type: 'string' },
        'rate-limits': { type: 'string' },
        unrestricted: { type: 'boolean' },
        'default-limits': { type: 'boolean' },
        from: { type: 'string' },
        to: { type: 'string' },
        granularity: { type: 'string' },
        limit: { type: 'string' },
        cursor: { type: 'string' },
        ...Object.fromEntries(QUOTA_NAMES.map((name) => [quotaOption(name), { type: 'string' } as const])),
        help: { type: 'boolean', short: 'h' },
      },
    });
    const command = positionals.join(' ');
    if (values.help) {
      io.out(USAGE);
      return 0;
    }
    // The CLI passes what it was given; the admin API validates it and its 400 is printed as it is.
    const list = { limit: numberArg(values.limit), cursor: values.cursor } as { limit?: number; cursor?: string };
    const workspace = () => ({ id: required(values.workspace, '--workspace') });
    const key = () => ({ id: required(values.workspace, '--workspace'), key_id: required(values.key, '--key') });
    const readKey = (path: { id: string; key_id: string }) => unwrap(deps.admin().GET('/workspaces/{id}/api-keys/{key_id}', { params: { path } }));
    switch (command) {
      case 'workspaces create':
        print(await unwrap(deps.admin().POST('/workspaces', { body: { name: values.name } as { name: string } })));
        return 0;
      case 'workspaces list':
        print(await unwrap(deps.admin().GET('/workspaces', { params: { query: list } })));
        return 0;
      case 'keys create': {
        const path = workspace();
        const body = {
          name: values.name,
          ...(values.scopes === undefined ? {} : { scopes: commaList(values.scopes) }),
          ...(values['expires-at'] === undefined ? {} : { expires_at: values['expires-at'] }),
          ...(values['rate-limits'] === undefined ? {} : { rate_limits: rateLimitsArg(values['rate-limits']) }),
        };
        print(await unwrap(deps.admin().POST('/workspaces/{id}/api-keys', { params: { path }, body: body as never })));
        return 0;
      }
      case 'keys list':
        print(await unwrap(deps.admin().GET('/workspaces/{id}/api-keys', { params: { path: workspace(), query: list } })));
        return 0;
      case 'keys update': {
        const path = key();
        const body = {
          name: values.name,
          scopes: valueOrNull(values.scopes, values.unrestricted, commaList, '--scopes and --unrestricted'),
          rate_limits: valueOrNull(values['rate-limits'], values['default-limits'], rateLimitsArg, '--rate-limits and --default-limits'),
        };
        if (body.name === undefined && body.scopes === undefined && body.rate_limits === undefined) {
          throw new UsageError('nothing to change: give --name, --scopes, --unrestricted, --rate-limits or --default-limits');
        }
        print(await unwrap(deps.admin().PATCH('/workspaces/{id}/api-keys/{key_id}', { params: { path }, body: body as never })));
        return 0;
      }
      case 'keys roll': {
        const path = key();
        const expiresIn = values['expires-in'];
        const body = (expiresIn === undefined ? {} : { expires_in_seconds: numberArg(expiresIn) }) as { expires_in_seconds?: number };
        const rolled = await unwrap(deps.admin().POST('/workspaces/{id}/api-keys/{key_id}/roll', { params: { path }, body }));
        const old = await readKey(path);
        print({ ...rolled, rolled_from: { id: path.key_id, expires_at: old.expires_at } });
        return 0;
      }
      case 'keys usage': {
        const query = { from: values.from, to: values.to, granularity: values.granularity } as { granularity?: 'hour' | 'day' };
        print(await unwrap(deps.admin().GET('/workspaces/{id}/api-keys/{key_id}/usage', { params: { path: key(), query } })));
        return 0;
      }
      case 'keys revoke': {
        const path = key();
        await unwrap(deps.admin().DELETE('/workspaces/{id}/api-keys/{key_id}', { params: { path } }));
        print(await readKey(path));
        return 0;
      }
      case 'quotas show':
        print(await unwrap(deps.admin().GET('/workspaces/{id}/quotas', { params: { path: workspace() } })));
        return 0;
      case 'quotas set': {
        const path = workspace();
        const body = quotasArg(values);
        if (Object.keys(body).length === 0) {
          throw new UsageError(`nothing to change: give ${QUOTA_NAMES.map((name) => `--${quotaOption(name)}`).join(', ')} (a number or default)`);
        }
        print(await unwrap(deps.admin().PATCH('/workspaces/{id}/quotas', { params: { path }, body })));
        return 0;
      }
      case 'migrate':
        print(await deps.migrate());
        return 0;
      case 'demo-seed':
        io.out(JSON.stringify(await demoSeed(deps.store())));
        return 0;
      default:
        throw new UsageError(command ? `unknown command: ${command}` : 'a command is required');
    }
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`${(err as Error).message}\n${USAGE}`);
      return 2;
    }
    if (err instanceof PlatformApiError) {
      io.err(err.status === 0 ? `gateway unreachable: ${err.message}` : JSON.stringify({ error: err.details }));
      return 1;
    }
    io.err(isTransientBackendError(err) ? `database unreachable: ${(err as Error).message}` : `failed: ${(err as Error).message}`);
    return 1;
  }
}
