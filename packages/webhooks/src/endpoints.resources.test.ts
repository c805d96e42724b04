import { redactUrlPassword } from './endpoints.resources';

describe('redactUrlPassword: a webhook URL as shown back (contract section 11)', () => {
  test.each([
    ['https://user:s3cret@hooks.example/in?x=1#f', 'https://user:***@hooks.example/in?x=1#f'],
    ['https://:s3cret@hooks.example/', 'https://:***@hooks.example/'],
    // Everything but the password stays as sent (case, port, no trailing slash).
    ['HTTPS://User:s3cret@Hooks.Example:8443', 'HTTPS://User:***@Hooks.Example:8443'],
    // The authority ends at its last "@": the password may hold "@" and ":".
    ['https://user:s3c@r:et@hooks.example/a@b', 'https://user:***@hooks.example/a@b'],
    ['https://user:s3cr%40et@hooks.example/', 'https://user:***@hooks.example/'],
    // Forms the URL parser accepts: no slashes, backslashes.
    ['https:user:s3cret@hooks.example/in', 'https:user:***@hooks.example/in'],
    ['https:\\\\user:s3cret@hooks.example\\in', 'https:\\\\user:***@hooks.example\\in'],
  ])('%s → %s', (url, shown) => {
    expect(redactUrlPassword(url)).toBe(shown);
  });

  test('a password the text hides from a plain match (a tab the parser drops) is still redacted', () => {
    const shown = redactUrlPassword('https://user:s3c\tret@hooks.example/in');
    expect(shown).not.toMatch(/s3c|ret@/);
    expect(new URL(shown).password).toBe('***');
  });

  test.each(['https://hooks.example/in', 'https://user@hooks.example/in', 'https://user:@hooks.example/', 'http://hooks.example/p:w@x'])(
    'a URL without a password is shown as sent: %s',
    (url) => {
      expect(redactUrlPassword(url)).toBe(url);
    },
  );
});
