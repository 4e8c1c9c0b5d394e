import { z } from 'zod';
import { commonShape, ConfigError, env, loadConfig } from '../../src';

describe('loadConfig', () => {
  const shape = {
    ...commonShape,
    PORT: env.port(8080),
    WORKERS: env.int(2, 1, 64),
    ENABLED: env.bool(false),
  };

  it('applies defaults and treats empty strings as unset', () => {
    const cfg = loadConfig(shape, { PORT: '', WORKERS: '4' });
    expect(cfg.PORT).toBe(8080);
    expect(cfg.WORKERS).toBe(4);
    expect(cfg.ENABLED).toBe(false);
    expect(cfg.VISION_MODE).toBe('standalone');
    expect(cfg.KAFKA_BROKERS).toEqual([]);
    expect(loadConfig(shape, { KAFKA_BROKERS: 'a:9092, b:9092,' }).KAFKA_BROKERS).toEqual([
      'a:9092',
      'b:9092',
    ]);
    expect(loadConfig(shape, { ENABLED: 'yes' }).ENABLED).toBe(true);
  });

  it('names the variable and the value in the error', () => {
    let err: unknown;
    try {
      loadConfig(shape, { PORT: 'abc' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain('PORT');
    expect((err as Error).message).toContain('"abc"');
    expect((err as ConfigError).problems).toHaveLength(1);
  });

  it('reports every bad variable at once', () => {
    expect(() =>
      loadConfig(shape, { PORT: '70000', WORKERS: '0', VISION_MODE: 'cluster', STREAM_DNS_TIMEOUT_MS: '1' }),
    ).toThrow(
      expect.objectContaining({
        problems: expect.arrayContaining([
          expect.stringContaining('PORT'),
          expect.stringContaining('WORKERS'),
          expect.stringContaining('VISION_MODE'),
          expect.stringContaining('STREAM_DNS_TIMEOUT_MS'),
        ]),
      }),
    );
  });

  it('mentions a required variable that is not set', () => {
    expect(() => loadConfig({ NEEDED: z.string() }, {})).toThrow(/NEEDED.*not set/);
  });
});

describe('configuration errors never echo secrets', () => {
  it('hides values of sensitive variables and redacts URLs in others', () => {
    const shape = {
      SOME_SECRET: z.string().min(16),
      DATABASE_URL: z.string().url(),
      SOME_LIST: z.enum(['a', 'b']),
    };
    let message = '';
    try {
      loadConfig(shape, {
        SOME_SECRET: 'short-secret',
        DATABASE_URL: 'not a url pass:word',
        SOME_LIST: 'rtsp://u:p@h',
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('SOME_SECRET');
    expect(message).toContain('DATABASE_URL');
    expect(message).not.toContain('short-secret');
    expect(message).not.toContain('pass:word');
    expect(message).toContain('rtsp://***@h');
    expect(message).not.toContain('u:p@');
  });
});
