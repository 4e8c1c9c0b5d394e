import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { KAFKA_PREFIX_RE } from '../bus/port';
import { redactText } from '../secrets/redact';

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

/** Suffix of the variable naming a file that holds a setting's value (`DATABASE_URL_FILE`). */
const FILE_SUFFIX = '_FILE';
/** The largest file a `*_FILE` variable may name. */
const MAX_FILE_BYTES = 1024 * 1024;

/** The text of the file `X_FILE` names, trimmed; or why it cannot be read (never its content). */
function readSettingFile(path: string): { ok: true; text: string } | { ok: false; why: string } {
  try {
    const st = statSync(path);
    if (!st.isFile()) return { ok: false, why: 'not a regular file' };
    if (st.size > MAX_FILE_BYTES) return { ok: false, why: `larger than ${MAX_FILE_BYTES} bytes` };
    return { ok: true, text: readFileSync(path, 'utf8').trim() };
  } catch (err) {
    return { ok: false, why: (err as NodeJS.ErrnoException).code ?? 'unreadable' };
  }
}

/**
 * The raw value of each variable of the schema: `X` from the environment, or, when `X_FILE` is set
 * instead, the trimmed content of the file it names (a mounted Secret keeps the value out of the
 * process environment). Setting both is a problem, as is a file that cannot be read.
 */
function collectInput(
  keys: string[],
  env: Env,
): { input: Record<string, string>; fromFile: Set<string>; problems: string[] } {
  const input: Record<string, string> = {};
  const fromFile = new Set<string>();
  const problems: string[] = [];
  for (const key of keys) {
    const v = env[key];
    const fileVar = `${key}${FILE_SUFFIX}`;
    const file = key.endsWith(FILE_SUFFIX) || keys.includes(fileVar) ? undefined : env[fileVar];
    const direct = v !== undefined && v !== '';
    if (file === undefined || file === '') {
      if (direct) input[key] = v;
      continue;
    }
    if (direct) {
      problems.push(`${key}: both ${key} and ${fileVar} are set; set only one`);
      continue;
    }
    const read = readSettingFile(file);
    if (!read.ok) {
      problems.push(`${fileVar}: cannot read ${JSON.stringify(redactText(file))} (${read.why})`);
      continue;
    }
    if (read.text !== '') {
      input[key] = read.text;
      fromFile.add(key);
    }
  }
  return { input, fromFile, problems };
}

/**
 * Validates environment variables against a zod object schema whose keys are the variable names.
 * Empty strings count as unset so that `FOO= npm start` falls back to the default. Any variable `X`
 * may come from a file instead: `X_FILE=/path` reads it from there (trimmed).
 */
export function loadConfig<S extends z.ZodRawShape>(
  shape: S,
  env: Env = process.env,
): z.infer<z.ZodObject<S>> {
  const { input, fromFile, problems } = collectInput(Object.keys(shape), env);
  const parsed = z.object(shape).safeParse(input);
  if (!parsed.success || problems.length > 0) {
    const issues = parsed.success ? [] : parsed.error.issues;
    throw new ConfigError([
      ...problems,
      ...issues.map((i) => {
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
        const label = fromFile.has(name) ? `${name} (from ${name}${FILE_SUFFIX})` : name;
        return `${label}: ${message}${shown}`;
      }),
    ]);
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
  /** The decoder sandbox launcher, or `off` (decoder-env.ts reads it where decoders are spawned). */
  VISION_DECODER_SANDBOX: z.string().optional(),
  DATABASE_URL: z.string().optional(),
  KAFKA_BROKERS: env.list([]),
  /** The Kafka client library of the bus (bus-factory.ts): `kafkajs` or `platformatic` (@platformatic/kafka). */
  KAFKA_CLIENT: z.enum(['kafkajs', 'platformatic']).default('kafkajs'),
  /**
   * Put before the name of each topic and consumer group of this deployment (busName in bus/port.ts), so that
   * deployments of different prefixes share a Kafka cluster without sharing a topic; empty: the plain names.
   */
  KAFKA_PREFIX: z
    .string()
    .regex(KAFKA_PREFIX_RE, 'at most 100 of A-Z a-z 0-9 . _ - (the characters of a Kafka topic name)')
    .default(''),
  /** This service's Kafka principal (SASL/SCRAM-SHA-512); both or neither (bus-factory.ts). */
  KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
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
  /**
   * How each admission queue sets the calls that run at once (admission-queue.ts, docs/OVERLOAD.md):
   * `fixed`, its `*_MAX_IN_FLIGHT`; `gradient`, an adaptive limit starting there.
   */
  ADMISSION_LIMIT: z.enum(['fixed', 'gradient']).default('fixed'),
  /** Port of the Prometheus endpoint GET /metrics (own listener, not through the gateway); 0 = a free one. */
  METRICS_PORT: env.int(9464, 0, 65535),
  /** Address it listens on; default 0.0.0.0 for a service process (Prometheus scrapes the pod), 127.0.0.1 for the standalone one. */
  METRICS_HOST: z.string().optional(),
  /**
   * On SIGTERM, how long the answers in flight get to finish before their connections are cut (drainServers in
   * server.ts); the chart sets it from `shutdown.drainSeconds`, within the pod's termination grace period.
   */
  SHUTDOWN_DRAIN_MS: env.int(10_000, 0, 600_000),
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
