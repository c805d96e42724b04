import { describe, errorBodyProblems, type Answer } from './http';

/** What an answer must be; each returns its problems (none: the check passed). */
export type Judge = (answer: Answer) => string[];

function noAnswer(answer: Answer): string[] | undefined {
  if (answer.status === 0) return [`no answer (${answer.error})`];
  if (answer.status >= 500) return [`${describe(answer)}: a 5xx for client input`];
  return undefined;
}

/** Refused: a 4xx with the contract's error body (contract section 2). */
export const refused: Judge = (answer) => {
  const early = noAnswer(answer);
  if (early) return early;
  if (answer.status < 400) return [`${answer.status}: accepted, must be refused with a 4xx`];
  return errorBodyProblems(answer).map((p) => `${answer.status}: ${p}`);
};

/** Exactly this status with the contract's error body (and this error code, when given). */
export function refusedWith(status: number, code?: string): Judge {
  return (answer) => {
    const early = noAnswer(answer);
    if (early) return early;
    if (answer.status !== status) return [`${describe(answer)}, expected ${status}${code ? ` ${code}` : ''}`];
    const problems = errorBodyProblems(answer).map((p) => `${answer.status}: ${p}`);
    if (code && answer.json?.error?.code !== code) problems.push(`${describe(answer)}, expected code ${code}`);
    return problems;
  };
}

/** Any answer but a 5xx or none, with the error body when it is a 4xx. */
export const answered: Judge = (answer) => {
  const early = noAnswer(answer);
  if (early) return early;
  return answer.status >= 400 ? errorBodyProblems(answer).map((p) => `${answer.status}: ${p}`) : [];
};

/**
 * Stored as sent or refused (contract section 2): a 4xx with the error body, or a 2xx whose
 * answer holds exactly the JSON text `"key":"value"` that was sent.
 */
export function storedAsSentOrRefused(key: string, value: string): Judge {
  return (answer) => {
    const early = noAnswer(answer);
    if (early) return early;
    if (answer.status >= 400) return errorBodyProblems(answer).map((p) => `${answer.status}: ${p}`);
    const expected = `${JSON.stringify(key)}:${JSON.stringify(value)}`;
    return answer.text.includes(expected) ? [] : [`${answer.status}: accepted but not stored as sent (${expected} missing from the answer)`];
  };
}

/**
 * For one entry of a bulk request (contract section 9): the whole request refused, or a 200
 * whose entry `index` is a 4xx (`entryStatus` when given) with an error object; an entry that was applied is judged by
 * `judge` as if its item were the answer of a request of its own.
 */
export function perBulkEntry(index: number, judge: Judge, entryStatus?: number): Judge {
  return (answer) => {
    const entry = answer.status === 200 ? answer.json?.results?.[index] : undefined;
    if (!entry) return judge(answer);
    if (entry.status >= 500) return [`entry ${index}: ${entry.status}, a 5xx for client input`];
    if (entry.status >= 400) {
      const problems =
        typeof entry.error?.code === 'string' && typeof entry.error?.message === 'string' ? [] : [`entry ${index}: ${entry.status} without an error object`];
      return entryStatus !== undefined && entry.status !== entryStatus ? [...problems, `entry ${index}: ${entry.status}, expected ${entryStatus}`] : problems;
    }
    return judge({ ...answer, status: entry.status, text: JSON.stringify(entry.item ?? null), json: entry.item }).map((p) => `entry ${index}: ${p}`);
  };
}

/**
 * For one scan of an offline upload (contract section 15): the whole upload refused, or a 200
 * whose result `index` has `status` and says nothing of the ticket's validation.
 */
export function perScanResult(index: number, status: string): Judge {
  return (answer) => {
    if (answer.status !== 200) return refused(answer);
    const result = answer.json?.results?.[index];
    if (!result) return [`200 without results[${index}]`];
    const problems = result.status === status ? [] : [`scan ${index}: ${String(result.status)}, expected ${status}`];
    return result.validated_at === null && result.validator_id === null && result.gate === null
      ? problems
      : [...problems, `scan ${index}: validation fields shown`];
  };
}
