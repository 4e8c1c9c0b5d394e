import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

describe('settings read from files (X_FILE)', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vision-config-files-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string) => {
    const p = path.join(dir, name);
    writeFileSync(p, content);
    return p;
  };
  const shape = {
    DATABASE_URL: z.string().url('expected a URL').optional(),
    S3_SECRET_KEY: z.string().min(16, 'expected at least 16 characters').optional(),
    WORKERS: env.int(2, 1, 64),
  };

  it('reads the value from the named file, trimmed, and validates it like the variable', () => {
    const cfg = loadConfig(shape, {
      DATABASE_URL_FILE: file('db', '  postgres://u:p@db:5432/vision\n'),
      WORKERS_FILE: file('workers', '8\n'),
    });
    expect(cfg.DATABASE_URL).toBe('postgres://u:p@db:5432/vision');
    expect(cfg.WORKERS).toBe(8);
    // An empty X_FILE counts as unset, as an empty X does.
    expect(loadConfig(shape, { WORKERS_FILE: '', WORKERS: '3' }).WORKERS).toBe(3);
  });

  it('refuses X and X_FILE both set, naming both variables and neither value', () => {
    let err: unknown;
    try {
      loadConfig(shape, {
        S3_SECRET_KEY: 'direct-secret-value-123',
        S3_SECRET_KEY_FILE: file('s3', 'file-secret-value-456'),
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).toMatch(/S3_SECRET_KEY\b.*S3_SECRET_KEY_FILE/);
    expect(message).not.toContain('direct-secret-value-123');
    expect(message).not.toContain('file-secret-value-456');
  });

  it('names the file variable when the file cannot be read, and never echoes a bad value from a file', () => {
    expect(() => loadConfig(shape, { DATABASE_URL_FILE: path.join(dir, 'missing') })).toThrow(
      /DATABASE_URL_FILE: cannot read .*missing.*ENOENT/,
    );
    expect(() => loadConfig(shape, { DATABASE_URL_FILE: dir })).toThrow(
      /DATABASE_URL_FILE.*not a regular file/,
    );
    let message = '';
    try {
      loadConfig(shape, { S3_SECRET_KEY_FILE: file('short', 'tooshort\n') });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain('S3_SECRET_KEY (from S3_SECRET_KEY_FILE)');
    expect(message).not.toContain('tooshort');
  });

  it('leaves a schema key that itself ends in _FILE alone', () => {
    const own = { GATEWAY_OPENAPI_FILE: z.string().optional() };
    const env = { GATEWAY_OPENAPI_FILE: '/app/docs/openapi.yaml', GATEWAY_OPENAPI_FILE_FILE: file('o', 'x') };
    expect(loadConfig(own, env)).toEqual({
      GATEWAY_OPENAPI_FILE: '/app/docs/openapi.yaml',
    });
  });
});
