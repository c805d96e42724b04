// The CLI passes what it was given; the admin API validates it and its 400 is printed as it is.

/** `a,b` → ['a', 'b']. */
export function commaList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `events=50,pipelines=10` → { events: 50, pipelines: 10 }; a value that is not a whole number stays text so the API names it. */
export function rateLimitsArg(value: string): Record<string, unknown> {
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
export const numberArg = (value: string | undefined): unknown => (value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : value);

/** `--limit` and `--cursor` of the list commands, as the list query. */
export const listQuery = (options: { limit?: string; cursor?: string }) =>
  ({ limit: numberArg(options.limit), cursor: options.cursor }) as { limit?: number; cursor?: string };

/** A value option or the flag that means "none of it" (`--scopes`/`--unrestricted`; commander refuses both): null for the flag. */
export function valueOrNull<T>(value: string | undefined, none: boolean | undefined, parseValue: (v: string) => T): T | null | undefined {
  if (none) return null;
  return value === undefined ? undefined : parseValue(value);
}
