import { ApiError } from '@vision/shared';

/** The ApiError a promise rejects with; fails the test when it resolves or rejects with anything else. */
export async function refusal(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}
