import { parseArgs } from 'node:util';
import { ApiError, errorBody, fieldErrorsFromZod, invalidRequest, isTransientBackendError, ListQuery, Uuid, type FieldError } from '@platform/core';
import type { z } from 'zod';
import { CreateApiKeyBody, CreateWorkspaceBody } from './admin.schemas';
import type { KeysStore } from './keys.store';
import { createApiKey, createWorkspace, demoSeed, listApiKeys, listWorkspaces, renderApiKey, renderWorkspace, revokeApiKey } from './keys.service';
import type { RevocationPublisher } from './revocations';

export const USAGE = `usage: platform <command>
  workspaces create --name NAME
  workspaces list [--limit N] [--cursor C]
  keys create --workspace ID --name NAME [--scopes a,b] [--expires-at RFC3339]
  keys list --workspace ID [--limit N] [--cursor C]
  keys revoke --workspace ID --key KEY_ID
  migrate
  demo-seed`;

export interface CliDeps {
  store: () => KeysStore;
  /** Opened only by `keys revoke`. */
  publisher: () => Promise<RevocationPublisher>;
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
          ...(values.scopes === undefined
            ? {}
            : {
                scopes: values.scopes
                  .split(',')
                  .map((s) => s.trim())
                  .filter(Boolean),
              }),
          ...(values['expires-at'] === undefined ? {} : { expires_at: values['expires-at'] }),
        });
        const { key, token } = await createApiKey(deps.store(), id, { name: body.name, scopes: body.scopes ?? null, expiresAt: body.expires_at ?? null });
        print(renderApiKey(key, token));
        return 0;
      }
      case 'keys list':
        print(await listApiKeys(deps.store(), workspaceId(values.workspace), list()));
        return 0;
      case 'keys revoke': {
        const id = workspaceId(values.workspace);
        if (values.key === undefined) throw new UsageError('--key is required');
        const keyId = parse(Uuid, values.key, 'path');
        const publisher = await deps.publisher().catch((err: Error) => ({
          publish: () => Promise.reject(err),
        }));
        const { key, announced } = await revokeApiKey(deps.store(), publisher, id, keyId);
        if (!announced) io.err('warning: revocation saved but not announced over Redis; gateways drop the key when their cache entry expires (30 s)');
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
