import { ConfigError, FakeClock, IDENTITY_HEADER, InProcessBus } from '@vision/shared';
import { start } from '../src/index';
import { identityDir, signFor } from '../../../test/helpers/identity';

const env = {
  VISION_IDENTITY_DIR: identityDir(),
  VISION_DATA_DIR: ':memory:',
  LOG_LEVEL: 'silent',
  QUOTA_OVERRIDES: '{"acme":{"video":2}}',
};

describe('quota start()', () => {
  it('starts on a free port with migrations applied, serves, and closes', async () => {
    const bus = new InProcessBus();
    const svc = await start({
      env,
      port: 0,
      host: '127.0.0.1',
      bus,
      clock: new FakeClock('2026-03-09T04:00:00Z'),
    });
    try {
      expect(svc.name).toBe('quota');
      const ready = await fetch(`${svc.url}/readyz`);
      expect(ready.status).toBe(200);
      const headers = {
        [IDENTITY_HEADER]: signFor({ subject: 'acme', requestId: 'r1' }, 'quota', {
          method: 'GET',
          target: '/v1/vision/quota',
        }),
      };
      const q = await fetch(`${svc.url}/v1/vision/quota`, { headers });
      expect(q.status).toBe(200);
      expect(((await q.json()) as { video_tasks: { limit: number } }).video_tasks.limit).toBe(2);
      expect((await fetch(`${svc.url}/v1/vision/quota`)).status).toBe(401);
    } finally {
      await svc.close();
      await bus.close();
    }
  });

  it('refuses to start with bad QUOTA_OVERRIDES, naming the variable', async () => {
    await expect(start({ env: { ...env, QUOTA_OVERRIDES: '{"acme":' }, port: 0 })).rejects.toThrow(
      ConfigError,
    );
    await expect(start({ env: { ...env, QUOTA_OVERRIDES: '{"acme":' }, port: 0 })).rejects.toThrow(
      /QUOTA_OVERRIDES/,
    );
  });
});
