import { z } from 'zod';
import { redactText } from './redact';

/** Variables whose values are never echoed in configuration errors (keys, secrets, URLs with credentials). */
const SENSITIVE_NAME = /SECRET|TOKEN|KEY|PASS|CRED|URL|ENDPOINT/i;

/** Raised when environment variables do not satisfy a service's schema; the message names each variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/**
 * Validates environment variables against a zod object schema whose keys are the variable names.
 * Empty strings count as unset so that `FOO= npm start` falls back to the default.
 */
export function loadConfig<S extends z.ZodRawShape>(
  shape: S,
  env: Env = process.env,
): z.infer<z.ZodObject<S>> {
  const input: Record<string, string> = {};
  for (const key of Object.keys(shape)) {
    const v = env[key];
    if (v !== undefined && v !== '') input[key] = v;
  }
  const parsed = z.object(shape).safeParse(input);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((i) => {
        const name = i.path.join('.');
        const got = input[name];
        const sensitive = SENSITIVE_NAME.test(name);
        const shown =
          got === undefined
            ? ' (not set)'
            : sensitive
              ? ' (value hidden)'
              : ` (got ${JSON.stringify(redactText(got))})`;
        // zod's own message may quote the received value: hide or redact it there too.
        const message = redactText(
          got === undefined ? i.message : i.message.split(got).join(sensitive ? '***' : redactText(got)),
        );
        return `${name}: ${message}${shown}`;
      }),
    );
  }
  return parsed.data;
}

/** Common variable types. */
const integer = (min: number, max: number) =>
  z.coerce
    .number({ invalid_type_error: 'expected an integer' })
    .int('expected an integer')
    .min(min, `expected an integer >= ${min}`)
    .max(max, `expected an integer <= ${max}`);

export const env = {
  port: (def: number) =>
    z.coerce
      .number({ invalid_type_error: 'expected a TCP port number' })
      .int('expected an integer TCP port')
      .min(1, 'expected a TCP port 1-65535')
      .max(65535, 'expected a TCP port 1-65535')
      .default(def),
  int: (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) => integer(min, max).default(def),
  /** An integer setting with no default: unset stays undefined. */
  optionalInt: (min = 0, max = Number.MAX_SAFE_INTEGER) => integer(min, max).optional(),
  number: (def: number, min = -Infinity, max = Infinity) =>
    z.coerce
      .number({ invalid_type_error: 'expected a number' })
      .min(min, `expected a number >= ${min}`)
      .max(max, `expected a number <= ${max}`)
      .default(def),
  bool: (def: boolean) =>
    z
      .enum(['true', 'false', '1', '0', 'yes', 'no'], {
        errorMap: () => ({ message: 'expected true or false' }),
      })
      .transform((v) => v === 'true' || v === '1' || v === 'yes')
      .default(def ? 'true' : 'false'),
  str: (def: string) => z.string().default(def),
  url: () => z.string().url('expected a URL'),
  list: (def: string[]) =>
    z
      .string()
      .transform((v) =>
        v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      )
      .default(def.join(',')),
};

/**
 * Variables every service reads. `VISION_MODE` picks the adapters: `standalone` (PGlite, in-process
 * bus, directory store, memory limiters) or `distributed` (Postgres, Kafka, MinIO, Redis).
 */
export const commonShape = {
  VISION_MODE: z.enum(['standalone', 'distributed']).default('standalone'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  VISION_DATA_DIR: z.string().default('./data'),
  /**
   * Directory of the identity keys (identity-keys.ts): this service's Ed25519 private key when it
   * calls others, and the public keys of the services that call it. Standalone: `<VISION_DATA_DIR>/identity`.
   */
  VISION_IDENTITY_DIR: z.string().optional(),
  DATABASE_URL: z.string().optional(),
  KAFKA_BROKERS: env.list([]),
  REDIS_URL: z.string().optional(),
  S3_ENDPOINT: z.string().optional(),
  S3_ACCESS_KEY: z.string().optional(),
  S3_SECRET_KEY: z.string().optional(),
  S3_BUCKET: z.string().default('vision'),
  S3_REGION: z.string().default('us-east-1'),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().optional(),
  /** Name servers for callers' stream hosts (`ip` or `ip:port`, comma-separated); the system's when empty. */
  STREAM_DNS_SERVERS: env.list([]),
  /** Deadline of resolving a caller's stream host (host-check.ts streamResolver); under TASKS_BACKEND_TIMEOUT_MS. */
  STREAM_DNS_TIMEOUT_MS: env.int(2000, 50, 30_000),
  /** Port of the Prometheus endpoint GET /metrics (own listener, not through the gateway); 0 = a free one. */
  METRICS_PORT: env.int(9464, 0, 65535),
  /** Address it listens on; default 0.0.0.0 for a service process (Prometheus scrapes the pod), 127.0.0.1 for the standalone one. */
  METRICS_HOST: z.string().optional(),
};

export type CommonConfig = z.infer<z.ZodObject<typeof commonShape>>;

/** Runs `fn`; a ConfigError prints its message and exits the process with status 2. */
export function exitOnConfigError<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
