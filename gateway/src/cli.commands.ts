import { parseArgs } from 'node:util';
import { ApiError, errorBody, fieldErrorsFromZod, invalidRequest, isTransientBackendError, ListQuery, Uuid, type FieldError } from '@platform/core';
import type { z } from 'zod';
import { CreateApiKeyBody, CreateWorkspaceBody, RollApiKeyBody, UpdateApiKeyBody, UsageQuery } from '@platform/admin-api';
import type { KeysStore } from './keys.store';
import {
  createApiKey,
  createWorkspace,
  demoSeed,
  keyUsage,
  listApiKeys,
  listWorkspaces,
  renderApiKey,
  renderWorkspace,
  revokeApiKey,
  rollApiKey,
  updateApiKey,
} from './keys.service';
import type { KeyChangePublisher } from './key-changes';

export const USAGE = `usage: platform <command>
  workspaces create --name NAME
  workspaces list [--limit N] [--cursor C]
  keys create --workspace ID --name NAME [--scopes a,b] [--expires-at RFC3339] [--rate-limits bucket=N,...]
  keys list --workspace ID [--limit N] [--cursor C]
  keys update --workspace ID --key KEY_ID [--name NAME] [--scopes a,b | --unrestricted] [--rate-limits bucket=N,... | --default-limits]
  keys roll --workspace ID --key KEY_ID [--expires-in SECONDS]   (default 86400: the old token's overlap)
  keys usage --workspace ID --key KEY_ID [--from RFC3339] [--to RFC3339] [--granularity hour|day]
  keys revoke --workspace ID --key KEY_ID
  migrate
  demo-seed`;

export interface CliDeps {
  store: () => KeysStore;
  /** Opened only by the commands that change a key (`keys update|roll|revoke`). */
  publisher: () => Promise<KeyChangePublisher>;
  migrate: () => Promise<{ applied: string[]; skipped: string[] }>;
}

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

class UsageError extends Error {}

function parse<S extends z.ZodType>(schema: S, value: unknown, location: FieldError['in'] = 'body'): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidRequest(fieldErrorsFromZod(result.error, location, value));
  return result.data;
}

function workspaceId(value: string | undefined): string {
  if (value === undefined) throw new UsageError('--workspace is required');
  const result = Uuid.safeParse(value);
  if (!result.success) throw invalidRequest([{ in: 'path', field: 'workspace', code: 'invalid_format', message: 'must be a UUID' }]);
  return result.data;
}

const CACHE_EXPIRY_NOTE = 'gateways pick it up when their cache entry expires (30 s)';

function keyOf(values: { workspace?: string; key?: string }): { id: string; keyId: string } {
  const id = workspaceId(values.workspace);
  if (values.key === undefined) throw new UsageError('--key is required');
  return { id, keyId: parse(Uuid, values.key, 'path') };
}

/** The Redis publisher, or one whose every publish fails with the connection's error: the change is saved all the same. */
function publisherOrFailing(deps: CliDeps): Promise<KeyChangePublisher> {
  return deps.publisher().catch((err: Error) => ({ publish: () => Promise.reject(err) }));
}

/** `a,b` → ['a', 'b']. */
function commaList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `events=50,pipelines=10` → { events: 50, pipelines: 10 }; a value that is not a whole number stays text so validation names it. */
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

/** Exactly one of a value option and the flag that means "none of it" (`--scopes`/`--unrestricted`). */
function valueOrNull<T>(value: string | undefined, none: boolean | undefined, parseValue: (v: string) => T, names: string): T | null | undefined {
  if (value !== undefined && none) throw new UsageError(`use one of ${names}`);
  if (none) return null;
  return value === undefined ? undefined : parseValue(value);
}

/**
 * The `platform` command: the admin API's operations, run with the same domain functions
 * directly on the database. Prints JSON; returns the exit code (0 ok, 1 failed, 2 usage).
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
        help: { type: 'boolean', short: 'h' },
      },
    });
    const command = positionals.join(' ');
    const list = (): { limit: number; cursor?: string } => parse(ListQuery, { limit: values.limit, cursor: values.cursor }, 'query');
    if (values.help) {
      io.out(USAGE);
      return 0;
    }
    switch (command) {
      case 'workspaces create': {
        const body = parse(CreateWorkspaceBody, { name: values.name });
        print(renderWorkspace(await createWorkspace(deps.store(), body.name)));
        return 0;
      }
      case 'workspaces list':
        print(await listWorkspaces(deps.store(), list()));
        return 0;
      case 'keys create': {
        const id = workspaceId(values.workspace);
        const body = parse(CreateApiKeyBody, {
          name: values.name,
          ...(values.scopes === undefined ? {} : { scopes: commaList(values.scopes) }),
          ...(values['expires-at'] === undefined ? {} : { expires_at: values['expires-at'] }),
          ...(values['rate-limits'] === undefined ? {} : { rate_limits: rateLimitsArg(values['rate-limits']) }),
        });
        const { key, token } = await createApiKey(deps.store(), id, {
          name: body.name,
          scopes: body.scopes ?? null,
          expiresAt: body.expires_at ?? null,
          rateLimits: body.rate_limits ?? null,
        });
        print(renderApiKey(key, token));
        return 0;
      }
      case 'keys list':
        print(await listApiKeys(deps.store(), workspaceId(values.workspace), list()));
        return 0;
      case 'keys update': {
        const { id, keyId } = keyOf(values);
        const body = parse(UpdateApiKeyBody, {
          name: values.name,
          scopes: valueOrNull(values.scopes, values.unrestricted, commaList, '--scopes and --unrestricted'),
          rate_limits: valueOrNull(values['rate-limits'], values['default-limits'], rateLimitsArg, '--rate-limits and --default-limits'),
        });
        if (body.name === undefined && body.scopes === undefined && body.rate_limits === undefined) {
          throw new UsageError('nothing to change: give --name, --scopes, --unrestricted, --rate-limits or --default-limits');
        }
        const change = { name: body.name, scopes: body.scopes, rateLimits: body.rate_limits };
        const { key, announced } = await updateApiKey(deps.store(), await publisherOrFailing(deps), id, keyId, change);
        if (!announced) io.err(`warning: change saved but not announced over Redis; ${CACHE_EXPIRY_NOTE}`);
        print(renderApiKey(key));
        return 0;
      }
      case 'keys roll': {
        const { id, keyId } = keyOf(values);
        const expiresIn = values['expires-in'];
        const body = parse(RollApiKeyBody, expiresIn === undefined ? {} : { expires_in_seconds: /^\d{1,15}$/.test(expiresIn) ? Number(expiresIn) : expiresIn });
        const { key, token, old, announced } = await rollApiKey(deps.store(), await publisherOrFailing(deps), id, keyId, body.expires_in_seconds);
        if (!announced) io.err(`warning: roll saved but the old key's new expiry was not announced over Redis; ${CACHE_EXPIRY_NOTE}`);
        print({ ...renderApiKey(key, token), rolled_from: { id: old.id, expires_at: renderApiKey(old).expires_at } });
        return 0;
      }
      case 'keys usage': {
        const { id, keyId } = keyOf(values);
        const query = parse(UsageQuery, { from: values.from, to: values.to, granularity: values.granularity }, 'query');
        print(await keyUsage(deps.store(), id, keyId, query));
        return 0;
      }
      case 'keys revoke': {
        const { id, keyId } = keyOf(values);
        const { key, announced } = await revokeApiKey(deps.store(), await publisherOrFailing(deps), id, keyId);
        if (!announced) io.err(`warning: revocation saved but not announced over Redis; ${CACHE_EXPIRY_NOTE}`);
        print(renderApiKey(key));
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
    if (err instanceof ApiError) {
      io.err(JSON.stringify(errorBody(err, 'cli')));
      return 1;
    }
    io.err(isTransientBackendError(err) ? `database unreachable: ${(err as Error).message}` : `failed: ${(err as Error).message}`);
    return 1;
  }
}
