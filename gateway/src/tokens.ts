import { hash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOKEN_RANDOM_CHARS = 40;
/** `plk_` + at least 32 base62 characters (contract section 3); the upper bound only keeps junk from being hashed. */
const TOKEN_FORMAT = /^plk_[0-9A-Za-z]{32,200}$/;

/** A new API token: `plk_` + 40 base62 characters (about 238 random bits). */
export function generateToken(): string {
  let out = 'plk_';
  while (out.length < 4 + TOKEN_RANDOM_CHARS) {
    for (const byte of randomBytes(64)) {
      // 248 = 4 * 62: rejecting the rest keeps every character equally likely.
      if (byte < 248) out += BASE62[byte % 62]!;
      if (out.length === 4 + TOKEN_RANDOM_CHARS) break;
    }
  }
  return out;
}

export function isTokenFormat(token: string): boolean {
  return TOKEN_FORMAT.test(token);
}

/** SHA-256 hex: the only form in which a token is stored. One-shot `hash`: a quarter of createHash's cost, on every request. */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** The visible start of a token, to recognise a key in lists without revealing it. */
export function tokenPrefix(token: string): string {
  return token.slice(0, 12);
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header || header.length < 8) return undefined;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}
