import { pbkdf2Sync } from 'node:crypto';
import { BUS_GRANTS, BUS_SERVICES, ConfigError, GROUPS, TOPICS, busAcls } from '../../src';
import { kafkaSaslFromConfig } from '../../src/bus/bus-factory';
import { decodeAlterScramResponse, encodeAlterScram } from '../../src/bus/kafka-scram';

describe('bus grants', () => {
  it('give every topic one producer and every group one consumer service', () => {
    const producers = BUS_SERVICES.flatMap((s) => BUS_GRANTS[s].produce.map((t) => `${t}<-${s}`));
    expect(producers.sort()).toEqual(
      [
        `${TOPICS.frames}<-inference`,
        `${TOPICS.imageCalls}<-images`,
        `${TOPICS.quotaEvents}<-quota`,
        `${TOPICS.taskEvents}<-tasks`,
      ].sort(),
    );
    const groups = BUS_SERVICES.flatMap((s) => BUS_GRANTS[s].consume.map((c) => `${c.group}<-${s}`));
    expect(groups.sort()).toEqual(
      [
        `${GROUPS.results}<-results`,
        `${GROUPS.resultsWebhooks}<-results`,
        `${GROUPS.tasksImageCalls}<-tasks`,
      ].sort(),
    );
  });

  it('are literal allow entries for the principal, each once', () => {
    const acls = busAcls('results', 'd1-results');
    expect(new Set(acls.map((a) => a.principal))).toEqual(new Set(['User:d1-results']));
    expect(
      acls.every((a) => a.resourceName !== '*' && a.permissionType === 3 && a.resourcePatternType === 3),
    ).toBe(true);
    const keys = acls.map((a) => `${a.resourceType}/${a.resourceName}/${a.operation}`);
    expect(new Set(keys).size).toBe(keys.length);
    // results reads task events in two groups, but writes nowhere.
    expect(acls.filter((a) => a.operation === 4)).toEqual([]);
    expect(
      acls
        .filter((a) => a.resourceType === 3)
        .map((a) => a.resourceName)
        .sort(),
    ).toEqual([GROUPS.results, GROUPS.resultsWebhooks].sort());
  });
});

describe('SCRAM credential requests', () => {
  it('encode the salted password the broker derives its keys from, behind the header tagged fields', () => {
    const salt = Buffer.alloc(32, 7);
    const body = encodeAlterScram([{ name: 'u', password: 'pw' }], ['gone'], () => salt);
    const salted = pbkdf2Sync('pw', salt, 4096, 64, 'sha512');
    const expected = Buffer.concat([
      Buffer.from([0]), // header tagged fields
      Buffer.from([2, 5, ...Buffer.from('gone'), 2, 0]), // 1 deletion: name, SCRAM-SHA-512, tags
      Buffer.from([2, 2, ...Buffer.from('u'), 2, 0, 0, 0x10, 0x00, 33, ...salt, 65, ...salted, 0]),
      Buffer.from([0]),
    ]);
    expect(body.equals(expected)).toBe(true);
    expect(body.includes(Buffer.from('pw'))).toBe(false);
  });

  it('decode each user result with its error', () => {
    const raw = Buffer.from([
      0,
      0,
      0,
      0,
      0,
      3,
      2,
      ...Buffer.from('a'),
      0,
      0,
      0,
      0,
      2,
      ...Buffer.from('b'),
      0,
      91,
      4,
      ...Buffer.from('n/a'),
      0,
      0,
    ]);
    expect(decodeAlterScramResponse(raw)).toEqual([
      { user: 'a', errorCode: 0 },
      { user: 'b', errorCode: 91, message: 'n/a' },
    ]);
  });
});

describe('KAFKA_SASL_USERNAME / KAFKA_SASL_PASSWORD', () => {
  it('are both or neither, and the error never echoes the password', () => {
    expect(kafkaSaslFromConfig({})).toBeUndefined();
    expect(kafkaSaslFromConfig({ KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' })).toEqual({
      mechanism: 'scram-sha-512',
      username: 'u',
      password: 'p',
    });
    expect(() => kafkaSaslFromConfig({ KAFKA_SASL_USERNAME: 'u' })).toThrow(ConfigError);
    let msg = '';
    try {
      kafkaSaslFromConfig({ KAFKA_SASL_PASSWORD: 'sekrit-value' });
    } catch (err) {
      msg = (err as Error).message;
    }
    expect(msg).toMatch(/KAFKA_SASL_USERNAME/);
    expect(msg).not.toMatch(/sekrit-value/);
  });
});
