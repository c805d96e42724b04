import { idsFor, type Fixtures } from '../support/fixtures';
import { observeAnswers, describe } from '../support/http';
import type { Battlefield } from '../support/platform';
import type { Category } from '../support/recorder';
import { adminRoutes, contractRoutes, fillPath, routeName } from '../support/routes';

/**
 * Contract section 2's headers: every answer the battery receives, from the gateway or a
 * service's own port, whatever its status, carries `x-content-type-options: nosniff`; `HEAD`
 * is answered on every GET route; JSON answers of 1 KiB or more are gzip-compressed when the
 * client accepts gzip.
 */
export function watchEveryAnswer(category: Category): () => void {
  return observeAnswers((request, answer) => {
    if (answer.status === 0) return;
    const { pathname } = new URL(request.url);
    const path = pathname.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, ':id');
    const nosniff = answer.headers['x-content-type-options'] === 'nosniff';
    category.check(`${request.method} ${path} -> ${answer.status}`, nosniff ? [] : ['answer without x-content-type-options: nosniff']);
  });
}

export async function attackHeaders(field: Battlefield, fixtures: Fixtures, category: Category): Promise<void> {
  for (const route of [...contractRoutes(), ...adminRoutes()].filter((r) => r.method === 'GET')) {
    const path = fillPath(route, idsFor(fixtures, route));
    const call = (method: string) => (route.service === 'admin' ? field.admin(method, path) : fixtures.tenant.call(method, path));
    const get = await call('GET');
    const head = await call('HEAD');
    const problems: string[] = [];
    if (head.status === 404 || head.status === 405 || head.status !== get.status) problems.push(`HEAD ${describe(head)} where GET is ${describe(get)}`);
    if (head.raw.length > 0) problems.push(`HEAD answered a body of ${head.raw.length} bytes`);
    category.check(`HEAD ${routeName(route)}`, problems);
  }

  // Large JSON answers: the OpenAPI documents (over 100 KiB) and the gateway's view of a service's list.
  for (const path of ['/docs/warehouse.json', '/docs/events.json']) {
    const answer = await fixtures.tenant.call('GET', path, undefined, { 'accept-encoding': 'gzip' });
    const problems =
      answer.status !== 200
        ? [`GET ${describe(answer)}`]
        : answer.headers['content-encoding'] !== 'gzip'
          ? [`${answer.raw.length} bytes of JSON sent uncompressed to a client that accepts gzip`]
          : [];
    category.check(`GET ${path} with accept-encoding: gzip`, problems);
  }
}
