import { ConfigError } from '@vision/shared';
import { loadQuotaConfig } from '../../src/config';

const base = {};

describe('quota configuration', () => {
  it('has the documented defaults', () => {
    const cfg = loadQuotaConfig(base);
    expect(cfg.QUOTA_VIDEO_DAILY).toBe(5);
    expect(cfg.QUOTA_IMAGE_DAILY).toBe(100);
    expect(cfg.QUOTA_OVERRIDES).toEqual({});
    expect(cfg.QUOTA_HOLD_TTL_MS).toBe(600_000);
    expect(cfg.QUOTA_PORT).toBe(8102);
  });

  it('reads overrides as JSON', () => {
    const cfg = loadQuotaConfig({ ...base, QUOTA_OVERRIDES: '{"acme":{"video":10,"image":500}}' });
    expect(cfg.QUOTA_OVERRIDES).toEqual({ acme: { video: 10, image: 500 } });
  });

  it.each(['{not json', '{"acme":{"video":"ten"}}', '{"acme":{"audio":1}}', '[1,2]'])(
    'rejects QUOTA_OVERRIDES=%s naming the variable',
    (value) => {
      let err: unknown;
      try {
        loadQuotaConfig({ ...base, QUOTA_OVERRIDES: value });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toMatch(/QUOTA_OVERRIDES/);
    },
  );

  it('requires valid limits', () => {
    expect(() => loadQuotaConfig({ ...base, QUOTA_VIDEO_DAILY: '-1' })).toThrow(/QUOTA_VIDEO_DAILY/);
    expect(() => loadQuotaConfig({ ...base, QUOTA_IMAGE_DAILY: 'many' })).toThrow(/QUOTA_IMAGE_DAILY/);
  });
});
