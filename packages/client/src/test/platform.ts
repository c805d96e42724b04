import type { operations } from '../generated/admin';
import { createAdminClient, createClient, unwrap, type ClientOptions, type PlatformClient } from '../index';

type NewKey = Omit<operations['createApiKey']['requestBody']['content']['application/json'], 'name'>;

/** The platform the globalSetup started. */
export function gateway(): { url: string; adminToken: string } {
  const url = process.env.CLIENT_TEST_GATEWAY_URL;
  const adminToken = process.env.CLIENT_TEST_ADMIN_TOKEN;
  if (!url || !adminToken) throw new Error('the integration tests run under their globalSetup (jest --selectProjects integration)');
  return { url, adminToken };
}

export const admin = () => createAdminClient({ baseUrl: gateway().url, adminToken: gateway().adminToken });

/** A workspace of its own and a key for it (scopes and limits as given), made with the admin client. */
export async function newWorkspace(
  name: string,
  key: NewKey = {},
): Promise<{ workspaceId: string; keyId: string; token: string; client: (options?: Partial<ClientOptions>) => PlatformClient }> {
  const workspace = await unwrap(admin().POST('/workspaces', { body: { name } }));
  const created = await unwrap(admin().POST('/workspaces/{id}/api-keys', { params: { path: { id: workspace.id } }, body: { name: `${name} key`, ...key } }));
  return {
    workspaceId: workspace.id,
    keyId: created.id,
    token: created.token,
    client: (options = {}) => createClient({ baseUrl: gateway().url, apiKey: created.token, ...options }),
  };
}
