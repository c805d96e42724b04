import { ADMIN_PREFIX, SERVICES, type ServiceName } from '@platform/core';
import { CONSOLE_PATH } from './console.assets';
import { ADMIN_DOCUMENT_PATH, DOCS_PATH } from './docs.handler';

/**
 * `GET /`: where everything of the platform is, as paths on this gateway (an index, not a page):
 * a newcomer who opens the gateway's address finds the docs, the console and each API from it.
 */
export function platformIndex() {
  const services = Object.keys(SERVICES) as ServiceName[];
  return {
    apis: { ...Object.fromEntries(services.map((name) => [name, SERVICES[name].prefix])), admin: ADMIN_PREFIX },
    docs: DOCS_PATH,
    openapi: { ...Object.fromEntries(services.map((name) => [name, `${DOCS_PATH}/${name}.json`])), admin: ADMIN_DOCUMENT_PATH },
    console: CONSOLE_PATH,
    health: '/healthz',
    ready: '/readyz',
  };
}
