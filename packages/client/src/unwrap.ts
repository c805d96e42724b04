import { errorFromResponse } from './errors.js';

/** What an openapi-fetch call resolves to. */
export interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The answer's body, or the `PlatformApiError` of a non-2xx answer thrown:
 * `const item = await unwrap(platform.warehouse.GET('/items/{id}', { params: { path: { id } } }))`.
 * A 204 resolves to undefined.
 */
export async function unwrap<T>(call: Promise<FetchResult<T>> | FetchResult<T>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw errorFromResponse(response, error);
  return data as T;
}

/** One page of a list (contract section 2). */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/**
 * Every element of a list, page after page, following `next_cursor`:
 * `for await (const item of paginate((cursor) => platform.warehouse.GET('/items', { params: { query: { cursor, limit: 100 } } })))`.
 * `call` gets undefined for the first page. Each page is fetched when the previous one is used up; a failed page throws.
 */
export async function* paginate<T>(call: (cursor: string | undefined) => Promise<FetchResult<Page<T>>>): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  do {
    const page = await unwrap(call(cursor));
    yield* page.data;
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
}
