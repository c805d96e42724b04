import { z } from 'zod';
import { ConfigError, env, parseConfig } from './config';

test('configuration is parsed once and a bad variable is named in one line', () => {
  const schema = z.object({ PORT: env.port(8080), SECRET: env.secret(), FLAG: env.boolean(false) });
  expect(parseConfig(schema, { SECRET: 'x'.repeat(16) })).toEqual({ PORT: 8080, SECRET: 'x'.repeat(16), FLAG: false });
  expect(parseConfig(schema, { SECRET: 'x'.repeat(16), PORT: '9', FLAG: 'true' })).toMatchObject({ PORT: 9, FLAG: true });
  expect(() => parseConfig(schema, { PORT: 'abc', SECRET: 'x'.repeat(16) })).toThrow(ConfigError);
  expect(() => parseConfig(schema, { PORT: 'abc', SECRET: 'x'.repeat(16) })).toThrow(/^invalid configuration: PORT: /);
  const err = (() => {
    try {
      parseConfig(schema, {});
    } catch (e) {
      return e as Error;
    }
  })();
  expect(err?.message).toMatch(/SECRET/);
  expect(err?.message).not.toMatch(/\n/);
});
