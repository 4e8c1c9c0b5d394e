import { ApiError, REASON, awaitFirstRequest, isUuid, parseIdempotencyKey } from '../../src';

describe('Idempotency-Key', () => {
  test('UUID form, any version, any case', () => {
    expect(isUuid('3f2c1b9e-8a7d-4c6b-9e5f-1a2b3c4d5e6f')).toBe(true);
    expect(isUuid('7D444840-9DC0-11D1-B245-5FFDCE74FAD2')).toBe(true);
    expect(isUuid('3f2c1b9e8a7d4c6b9e5f1a2b3c4d5e6f')).toBe(false);
    expect(isUuid('key-1')).toBe(false);
    expect(isUuid(undefined)).toBe(false);
  });

  test('parsed to lower case; missing and malformed keys give reason idempotency_key', () => {
    expect(parseIdempotencyKey('7D444840-9DC0-11D1-B245-5FFDCE74FAD2')).toBe(
      '7d444840-9dc0-11d1-b245-5ffdce74fad2',
    );
    for (const [header, problem] of [
      [undefined, 'missing'],
      ['', 'missing'],
      ['not-a-uuid', 'not_uuid'],
      [['3f2c1b9e-8a7d-4c6b-9e5f-1a2b3c4d5e6f', '3f2c1b9e-8a7d-4c6b-9e5f-1a2b3c4d5e6f'], 'not_uuid'],
    ] as const) {
      let err: unknown;
      try {
        parseIdempotencyKey(header as string | string[] | undefined);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).code).toBe('OP-TASK-REQUEST-INVALID');
      expect((err as ApiError).details).toEqual({ reason: REASON.idempotency_key, problem });
    }
  });

  test('awaitFirstRequest: the first answer, or the timeout answer', async () => {
    let n = 0;
    await expect(
      awaitFirstRequest(async () => (++n >= 3 ? 'done' : undefined), {
        waitMs: 5000,
        pollMs: 1,
        onTimeout: () => 'late',
      }),
    ).resolves.toBe('done');
    await expect(
      awaitFirstRequest(async () => undefined, { waitMs: 5, pollMs: 1, onTimeout: () => 'late' }),
    ).resolves.toBe('late');
  });
});
