// What the alert says about a failed call: a plain function of the client's PlatformApiError,
// without the DOM, so it is tested alone.
import type { PlatformApiError } from './api.js';

/** No answer came, after the client's retries. */
export const NETWORK_ERROR_MESSAGE = 'The gateway could not be reached. Check your connection and retry.';

export interface ErrorReport {
  message: string;
  /** Each problem of a 400 (or 409), `field: message`. */
  problems: string[];
  /** To quote when asking for support. */
  requestId: string | undefined;
}

/**
 * The platform's message and every problem it listed (contract section 2); the console's own words
 * where the client's are for developers: no answer (its message names the URL and the browser's
 * error), or an answer that was not the platform's error body (a proxy's page).
 */
export function reportOf(error: Pick<PlatformApiError, 'status' | 'code' | 'message' | 'errors' | 'requestId'>): ErrorReport {
  let message = error.message;
  if (error.status === 0) message = NETWORK_ERROR_MESSAGE;
  else if (error.code === `http_${error.status}`) message = `The gateway answered ${error.message.replace(/^HTTP /, '')}.`;
  return { message, problems: error.errors.map((p) => (p.field ? `${p.field}: ${p.message}` : p.message)), requestId: error.requestId };
}
