import { ApiError } from '../../src/contract/errors';
import {
  MAX_REQUEST_TIMEOUT_MS,
  MIN_REQUEST_TIMEOUT_MS,
  REQUEST_TIMEOUT_HEADER,
  deadlineFromTimeout,
} from '../../src/admission/deadline';

const NOW = 1_700_000_000_000;

function refusal(value: string): ApiError {
  try {
    deadlineFromTimeout(value, NOW);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error(`"${value}" was accepted`);
}

describe('X-Request-Timeout-Ms', () => {
  it('is a deadline counted from now, from the floor to the ceiling', () => {
    expect(MIN_REQUEST_TIMEOUT_MS).toBe(100);
    expect(deadlineFromTimeout(undefined, NOW)).toBeUndefined();
    expect(deadlineFromTimeout('100', NOW)).toBe(NOW + 100);
    expect(deadlineFromTimeout(' 2500 ', NOW)).toBe(NOW + 2500);
    expect(deadlineFromTimeout(String(MAX_REQUEST_TIMEOUT_MS), NOW)).toBe(NOW + MAX_REQUEST_TIMEOUT_MS);
  });

  it.each(['1', '50', '99', '0'])('"%s" is under the floor: 400 invalid_field, saying so', (value) => {
    const err = refusal(value);
    expect(err.status).toBe(400);
    expect(err.code).toBe('OP-TASK-REQUEST-INVALID');
    expect(err.details).toEqual({
      reason: 'invalid_field',
      field: REQUEST_TIMEOUT_HEADER,
      minimum: 100,
      maximum: MAX_REQUEST_TIMEOUT_MS,
    });
    expect(err.message).toContain('below 100 ms');
  });

  it.each(['abc', '600001', '1.5', '-5', '', '100,200'])(
    '"%s" is malformed or too long: 400 invalid_field',
    (value) => {
      const err = refusal(value);
      expect(err.status).toBe(400);
      expect(err.details).toMatchObject({ reason: 'invalid_field', field: REQUEST_TIMEOUT_HEADER });
      expect(err.message).toContain('from 100 to 600000');
    },
  );
});
