/**
 * The fault tests under test/distributed need the distributed deployment (real Postgres, Kafka, Redis, MinIO,
 * toxiproxy) and run only under scripts/test-distributed.sh, which sets E2E_STACK=distributed. Elsewhere jest
 * leaves those files out (jest.config.js); this file lists each of them as skipped, with the command that runs it,
 * so a plain `npx jest` says what it did not run instead of hiding it.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';

const dir = path.join(__dirname, 'distributed');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.test.ts'))
  .sort();

describe('distributed fault tests (not run here)', () => {
  test('test/distributed holds fault tests', () => {
    expect(files.length).toBeGreaterThan(0);
  });
  for (const f of files) {
    test.skip(`test/distributed/${f}: run with scripts/test-distributed.sh test/distributed/${f}`, () =>
      undefined);
  }
});
