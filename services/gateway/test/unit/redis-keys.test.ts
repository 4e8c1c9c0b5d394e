import { loadGatewayConfig } from '../../src/config';
import { gatewayKeyPrefix, gatewayRedisKeys, REDIS_PREFIX_RE } from '../../src/domain/redis-keys';

const LIMITS = { qps: 20, burst: 40, concurrency: 16 };

/** A small deterministic generator (mulberry32), so that a failure names inputs that fail again. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const pick = (next: () => number, chars: string, max: number) =>
  Array.from({ length: Math.floor(next() * (max + 1)) }, () => chars[Math.floor(next() * chars.length)]).join(
    '',
  );

describe("the gateway's Redis keys", () => {
  it('without a prefix are the plain gw: keys, one for the rate, its burst and the slots of a subject', () => {
    expect(gatewayKeyPrefix('')).toBe('gw');
    expect(gatewayRedisKeys('', 'acme', LIMITS)).toEqual([
      'gw:rate:20:40:qps:acme',
      'gw:rate:20:40:burst:qps:acme',
      'gw:slots:conc:acme',
    ]);
  });

  it("with a prefix, every key starts with it; the chart's namespace.release. prefix of two releases", () => {
    const prod = gatewayRedisKeys('shop.vision.', 'acme', LIMITS);
    const staging = gatewayRedisKeys('staging.vision.', 'acme', LIMITS);
    expect(prod).toEqual([
      'shop.vision.gw:rate:20:40:qps:acme',
      'shop.vision.gw:rate:20:40:burst:qps:acme',
      'shop.vision.gw:slots:conc:acme',
    ]);
    expect(staging.filter((k) => prod.includes(k))).toEqual([]);
  });

  it('two different prefixes never share a key, whatever the subjects and limits', () => {
    // Prefixes where one starts the other, and ones spelt like the keys that follow them.
    const tricky = ['', 'g', 'gw', 'gw-', 'gw.', 'a.', 'a.b.', 'a.bgw', 'x_y.', 'x.y.', 'vision.vis.'];
    const subjects = ['acme', 'gw', ':', 'gw:rate:20:40:qps:acme', 'conc:x', 'a.b.gw'];
    const next = random(20_251_129);
    const prefixes = [
      ...tricky,
      ...Array.from({ length: 60 }, () => pick(next, 'gw.:_-a1', 8).replace(/:/g, '')),
    ];
    for (let i = 0; i < 200; i++) subjects.push(pick(next, 'gw:qpsconrate0.-_a', 12));
    const limits = [LIMITS, { qps: 0.5, burst: 0, concurrency: 1 }, { qps: 2, burst: 40, concurrency: 3 }];
    const owner = new Map<string, string>();
    for (const prefix of new Set(prefixes)) {
      expect(REDIS_PREFIX_RE.test(prefix)).toBe(true);
      for (const subject of subjects)
        for (const l of limits)
          for (const key of gatewayRedisKeys(prefix, subject, l)) {
            const first = owner.get(key);
            if (first !== undefined && first !== prefix)
              throw new Error(`prefixes ${JSON.stringify(first)} and ${JSON.stringify(prefix)} share ${key}`);
            owner.set(key, prefix);
          }
    }
  });

  it('a prefix with a colon could share a key with another deployment, so the configuration refuses it', () => {
    // '' for subject 'gw:slots:conc:b', and 'gw:slots:conc:' for subject 'b': the same sorted set.
    expect(gatewayRedisKeys('', 'gw:slots:conc:b', LIMITS)[2]).toBe(
      gatewayRedisKeys('gw:slots:conc:', 'b', LIMITS)[2],
    );
    expect(() => loadGatewayConfig({ GATEWAY_REDIS_PREFIX: 'gw:slots:conc:' })).toThrow(
      /GATEWAY_REDIS_PREFIX/,
    );
    expect(() => loadGatewayConfig({ GATEWAY_REDIS_PREFIX: 'x'.repeat(101) })).toThrow(
      /GATEWAY_REDIS_PREFIX/,
    );
    expect(loadGatewayConfig({}).GATEWAY_REDIS_PREFIX).toBe('');
    expect(loadGatewayConfig({ GATEWAY_REDIS_PREFIX: 'shop.vision-1_a.' }).GATEWAY_REDIS_PREFIX).toBe(
      'shop.vision-1_a.',
    );
  });
});
