import {
  ApiError,
  ERROR_STATUS,
  fromEnvelope,
  invalidRequest,
  isErrorCode,
  toEnvelope,
  type ErrorCode,
} from '../../src';

describe('error codes and envelope', () => {
  it('maps every SPEC code to its HTTP status', () => {
    const spec: Record<ErrorCode, number> = {
      'OP-AUTH-REQUIRED': 401,
      'OP-TASK-REQUEST-INVALID': 400,
      'OP-TASK-SCENE-UNAVAILABLE': 400,
      'OP-QUOTA-DAILY-EXHAUSTED': 429,
      'OP-QUOTA-RATE-LIMITED': 429,
      'OP-TASK-UPSTREAM-DOWN': 503,
      'OP-TASK-BREAKER-OPEN': 503,
      'OP-SYS-UNAVAILABLE': 503,
      'OP-TASK-NOT-STOPPABLE': 409,
      'OP-NOT-FOUND': 404,
      'OP-METHOD-NOT-ALLOWED': 405,
      'OP-SYS-INTERNAL': 500,
      'OP-TASK-NO-PICTURE': 409,
      'OP-TASK-NO-SNAPSHOT': 404,
      'OP-TASK-ENDED': 409,
    };
    expect(ERROR_STATUS).toEqual(spec);
    for (const [code, status] of Object.entries(spec))
      expect(new ApiError(code as ErrorCode, 'x').status).toBe(status);
  });

  it('builds the envelope with the request id, details only when present', () => {
    expect(toEnvelope(new ApiError('OP-TASK-NOT-STOPPABLE', 'Task already ended'), 'rid-1')).toEqual({
      error: { code: 'OP-TASK-NOT-STOPPABLE', message: 'Task already ended', request_id: 'rid-1' },
    });
    const env = toEnvelope(invalidRequest('bad field', 'unknown_field', { field: 'x' }), 'rid-2');
    expect(env.error.details).toEqual({ reason: 'unknown_field', field: 'x' });
  });

  it('reads an envelope back only when code and status agree', () => {
    const body = toEnvelope(new ApiError('OP-QUOTA-RATE-LIMITED', 'slow down', { retry_after_ms: 10 }), 'r');
    const back = fromEnvelope(429, body);
    expect(back).toBeInstanceOf(ApiError);
    expect(back).toMatchObject({
      code: 'OP-QUOTA-RATE-LIMITED',
      status: 429,
      details: { retry_after_ms: 10 },
    });
    expect(fromEnvelope(500, body)).toBeUndefined();
    expect(fromEnvelope(400, { error: { code: 'NOPE' } })).toBeUndefined();
    expect(fromEnvelope(400, 'text')).toBeUndefined();
    expect(isErrorCode('OP-NOT-FOUND')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
  });
});
