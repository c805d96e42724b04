import { randomUUID } from 'node:crypto';

const VISIBLE_ASCII_1_128 = /^[\x21-\x7e]{1,128}$/;

/** The client's x-request-id when it is 1-128 visible ASCII characters, else a new one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && VISIBLE_ASCII_1_128.test(header) ? header : randomUUID();
}
