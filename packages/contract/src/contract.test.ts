import { ADMIN_PREFIX, BUCKET_LIMITS, ERROR_CODES, ROUTES, SCOPES, SERVICES, parseRouteKey } from './index';

test('every route names a known scope, and a bucket only of the known ones', () => {
  for (const routes of Object.values(ROUTES)) {
    for (const [key, spec] of Object.entries(routes) as [string, { scope: string; bucket?: string }][]) {
      expect(SCOPES).toContain(spec.scope);
      if (spec.bucket !== undefined) expect(Object.keys(BUCKET_LIMITS)).toContain(spec.bucket);
      expect(parseRouteKey(key).path.startsWith('/')).toBe(true);
    }
  }
});

test('each service and the admin API have prefixes of their own, and error codes are distinct', () => {
  const prefixes = [...Object.values(SERVICES).map((s) => s.prefix), ADMIN_PREFIX];
  expect(new Set(prefixes).size).toBe(prefixes.length);
  expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
});

test('the package imports nothing: browsers load its modules as they are', async () => {
  const { readdirSync, readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  for (const file of readdirSync(__dirname).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))) {
    const imports = [...readFileSync(join(__dirname, file), 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]);
    for (const specifier of imports) expect(specifier).toMatch(/^\.\/[a-z-]+\.js$/);
  }
});
