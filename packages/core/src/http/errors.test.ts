import { ApiError, ErrorBody, errorBody, FieldErrors, internalError, invalidRequest, noSuchEndpoint, rateLimited, type FieldError } from './errors';

const problem = (i: number): FieldError => ({ in: 'body', field: `f${i}`, code: 'unknown_field', message: 'is not a known field' });

describe('errors[] is bounded (contract section 2)', () => {
  test('FieldErrors keeps the first 100 and counts all', () => {
    const errors = new FieldErrors();
    for (let i = 0; i < 45_000; i++) errors.add(problem(i));
    expect(errors.list).toHaveLength(100);
    expect(errors.total).toBe(45_000);
    const merged = new FieldErrors();
    merged.add(problem(-1));
    merged.addAll(errors);
    expect(merged.total).toBe(45_001);
    expect(merged.list[0]).toEqual(problem(-1));
  });

  test('invalidRequest and errorBody list at most 100 and give errors_total only beyond', () => {
    const many = errorBody(invalidRequest(Array.from({ length: 250 }, (_, i) => problem(i))), 'r');
    expect(many.error.errors).toHaveLength(100);
    expect(many.error.errors_total).toBe(250);
    expect(ErrorBody.parse(many)).toEqual(many);
    const hundred = errorBody(invalidRequest(Array.from({ length: 100 }, (_, i) => problem(i))), 'r');
    expect(hundred.error.errors).toHaveLength(100);
    expect(hundred.error).not.toHaveProperty('errors_total');
    const direct = errorBody(new ApiError(409, 'conflict', 'c', { errors: Array.from({ length: 101 }, (_, i) => problem(i)) }), 'r');
    expect(direct.error.errors).toHaveLength(100);
    expect(direct.error.errors_total).toBe(101);
  });

  test('a field shows NUL and lone surrogates as escapes and is cut at 1024 characters', () => {
    const body = errorBody(
      invalidRequest([
        { ...problem(0), field: 'm.a\u0000\ud800' },
        { ...problem(1), field: 'k'.repeat(5000) },
      ]),
      'r',
    );
    expect(body.error.errors![0]!.field).toBe('m.a\\u0000\\ud800');
    expect([...body.error.errors![1]!.field]).toHaveLength(1024);
    expect(body.error.errors![1]!.field.endsWith('…')).toBe(true);
  });
});

test('the 404, 429 and 500 every process answers say the same words (one factory each)', () => {
  const shown = (error: ApiError) => errorBody(error, 'rid');
  expect(shown(noSuchEndpoint())).toEqual({ error: { code: 'not_found', message: 'No such endpoint.', request_id: 'rid' } });
  expect(shown(rateLimited())).toEqual({
    error: { code: 'rate_limited', message: 'Rate limit exceeded; retry after the time in Retry-After.', request_id: 'rid' },
  });
  expect(shown(internalError())).toEqual({ error: { code: 'internal_error', message: 'Something went wrong on our side.', request_id: 'rid' } });
  expect([noSuchEndpoint().status, rateLimited().status, internalError().status]).toEqual([404, 429, 500]);
});
