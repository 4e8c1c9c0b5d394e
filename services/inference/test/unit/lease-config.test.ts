import { ConfigError } from '@vision/shared';
import { loadInferenceConfig } from '../../src/index';

describe('the lease settings', () => {
  it('refuse a lease shorter than three beats: the replica would fence its jobs at every late beat', () => {
    const load = () =>
      loadInferenceConfig({ INFERENCE_LEASE_TTL_MS: '5000', INFERENCE_LEASE_BEAT_MS: '2000' });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/INFERENCE_LEASE_TTL_MS: expected at least three times INFERENCE_LEASE_BEAT_MS/);
  });

  it('take a lease of three beats or more, and default to 8 s renewed every 2 s', () => {
    expect(
      loadInferenceConfig({ INFERENCE_LEASE_TTL_MS: '6000', INFERENCE_LEASE_BEAT_MS: '2000' }),
    ).toMatchObject({
      INFERENCE_LEASE_TTL_MS: 6000,
      INFERENCE_LEASE_BEAT_MS: 2000,
    });
    expect(loadInferenceConfig({})).toMatchObject({
      INFERENCE_LEASE_TTL_MS: 8000,
      INFERENCE_LEASE_BEAT_MS: 2000,
    });
  });
});
