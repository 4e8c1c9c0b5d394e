import { generateKey, hashKey, parseBearer, parseConfiguredKeys } from '../../src/domain/key-format';
import { matchRoute, routeTemplate, IMAGE_BODY_LIMIT, VIDEO_BODY_LIMIT } from '../../src/domain/routes';
import { limitsFor, retryAfterSeconds } from '../../src/domain/limits';

describe('API key format', () => {
  it('generates distinct keys whose hash is what gets stored', () => {
    const a = generateKey();
    const b = generateKey();
    expect(a.key).not.toBe(b.key);
    expect(a.key.startsWith(`vk_${a.keyId}_`)).toBe(true);
    expect(a.hash).toBe(hashKey(a.key));
    expect(a.hash).not.toContain(a.key);
  });

  it.each([
    [undefined, undefined],
    ['', undefined],
    ['Bearer', undefined],
    ['Bearer ', undefined],
    ['bearer abcdefgh12', 'abcdefgh12'],
    ['BEARER abcdefgh12', 'abcdefgh12'],
    ['Bearer\tabcdefgh12', undefined],
    ['Bearerabcdefgh12', undefined],
    ['Basic abcdefgh12', undefined],
    ['Bearer  abcdefgh12', undefined],
    ['Bearer abcdefgh12 extra', undefined],
    ['Bearer abc', undefined],
    ['Bearer abcdefgh12', 'abcdefgh12'],
  ])('parseBearer(%p) = %p', (header, expected) => {
    expect(parseBearer(header)).toBe(expected);
  });

  it('parses VISION_API_KEYS and names the bad entry', () => {
    expect(parseConfiguredKeys('k1k1k1k1k1:acme, k2k2k2k2k2:other')).toEqual([
      { key: 'k1k1k1k1k1', subject: 'acme' },
      { key: 'k2k2k2k2k2', subject: 'other' },
    ]);
    expect(() => parseConfiguredKeys('goodgoodgood:acme,short:x')).toThrow(/entry 2/);
    expect(() => parseConfiguredKeys('nosubjectkey')).toThrow(/entry 1/);
  });
});

describe('routing table', () => {
  it.each([
    ['/v1/vision/tasks', 'tasks'],
    ['/v1/vision/tasks/abc', 'tasks'],
    ['/v1/vision/tasks/abc/stop', 'tasks'],
    ['/v1/vision/tasks/abc/results', 'results'],
    ['/v1/vision/video-tasks', 'tasks'],
    ['/v1/vision/image-detections', 'images'],
    ['/api/op/v1/scenes', 'tasks'],
    ['/v1/vision/tasks/t1/results/stream', 'results'],
    ['/v1/vision/quota', 'quota'],
    ['/v1/vision/webhooks', 'results'],
    ['/v1/vision/webhooks/ep_1', 'results'],
    ['/v1/vision/webhooks/ep_1/rotate-secret', 'results'],
    ['/v1/vision/webhooks/ep_1/deliveries', 'results'],
    ['/v1/vision/webhooks/ep_1/deliveries/d1/redeliver', 'results'],
  ])('%s -> %s', (p, upstream) => {
    expect(matchRoute(p)?.upstream).toBe(upstream);
  });

  it('names webhook routes by their templates, and DELETE only where the path has it', () => {
    expect(routeTemplate('/v1/vision/webhooks/ep_1/deliveries/d1/redeliver')).toBe(
      '/v1/vision/webhooks/{endpoint_id}/deliveries/{delivery_id}/redeliver',
    );
    expect(matchRoute('/v1/vision/webhooks/ep_1')?.methods).toEqual(['GET', 'DELETE']);
    expect(matchRoute('/v1/vision/webhooks')?.methods).not.toContain('DELETE');
  });

  it('has no route for unknown paths', () => {
    expect(matchRoute('/v2/anything')).toBeUndefined();
    expect(matchRoute('/v1/vision/taskss')).toBeUndefined();
  });

  it('caps bodies per route', () => {
    expect(matchRoute('/v1/vision/image-detections')?.maxBodyBytes).toBe(IMAGE_BODY_LIMIT);
    expect(matchRoute('/v1/vision/video-tasks')?.maxBodyBytes).toBe(VIDEO_BODY_LIMIT);
    expect(VIDEO_BODY_LIMIT).toBeGreaterThan(512 * 1000 * 1000);
  });
});

describe('limits', () => {
  it('applies per-subject overrides over defaults', () => {
    const d = { qps: 5, burst: 10, concurrency: 3 };
    expect(limitsFor('a', d, { a: { qps: 1 } })).toEqual({ qps: 1, burst: 10, concurrency: 3 });
    expect(limitsFor('b', d, { a: { qps: 1 } })).toEqual(d);
  });
  it('rounds Retry-After up to whole seconds, at least 1', () => {
    expect(retryAfterSeconds(1)).toBe('1');
    expect(retryAfterSeconds(1001)).toBe('2');
    expect(retryAfterSeconds(0)).toBe('1');
  });
});

describe('auth cache', () => {
  it('reuses successes for the TTL only, never caches failures, and is bounded', async () => {
    const { AuthCache } = await import('../../src/use-cases/authenticate');
    let t = 0;
    const db = new Map([['good-key-123', 'acme']]);
    let lookups = 0;
    const cache = new AuthCache(
      async (k) => {
        lookups++;
        return db.get(k);
      },
      1000,
      2,
      () => t,
    );
    expect(await cache.authenticate('good-key-123')).toBe('acme');
    expect(await cache.authenticate('good-key-123')).toBe('acme');
    expect(lookups).toBe(1);
    expect(await cache.authenticate('unknown-key-1')).toBeUndefined();
    expect(await cache.authenticate('unknown-key-1')).toBeUndefined();
    expect(lookups).toBe(3);
    db.delete('good-key-123'); // revoked
    t = 500;
    expect(await cache.authenticate('good-key-123')).toBe('acme');
    t = 1001;
    expect(await cache.authenticate('good-key-123')).toBeUndefined();
  });
});
