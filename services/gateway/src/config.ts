import { z } from 'zod';
import { commonShape, env, loadConfig, SERVER_LIMITS } from '@vision/shared';
import { limitOverridesSchema } from './domain/limits';
import { parseConfiguredKeys } from './domain/key-format';
import { REDIS_PREFIX_RE } from './domain/redis-keys';

const jsonOf = <T extends z.ZodTypeAny>(schema: T, what: string) =>
  z.string().transform((v, ctx): z.infer<T> => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: `expected JSON: ${what}` });
      return z.NEVER;
    }
    const r = schema.safeParse(parsed);
    if (!r.success) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `expected ${what}: ${r.error.issues[0]?.message}`,
      });
      return z.NEVER;
    }
    return r.data as z.infer<T>;
  });

export const gatewayShape = {
  ...commonShape,
  PORT: env.port(8080),
  HOST: env.str('0.0.0.0'),
  TASKS_URL: env.str('http://127.0.0.1:8101'),
  QUOTA_URL: env.str('http://127.0.0.1:8102'),
  RESULTS_URL: env.str('http://127.0.0.1:8103'),
  IMAGES_URL: env.str('http://127.0.0.1:8104'),
  VISION_API_KEYS: z
    .string()
    .transform((v, ctx) => {
      try {
        return parseConfiguredKeys(v);
      } catch (err) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: (err as Error).message });
        return z.NEVER;
      }
    })
    .optional(),
  GATEWAY_QPS: env.number(20, 0.01),
  GATEWAY_BURST: env.int(40, 0),
  GATEWAY_CONCURRENCY: env.int(16, 1),
  /**
   * Put before every Redis key of the limits (domain/redis-keys.ts), so that deployments of different prefixes share a
   * Redis server without sharing a count; empty: the plain `gw:` keys.
   */
  GATEWAY_REDIS_PREFIX: z
    .string()
    .regex(REDIS_PREFIX_RE, 'at most 100 of A-Z a-z 0-9 . _ - (no colon)')
    .default(''),
  GATEWAY_LIMIT_OVERRIDES: jsonOf(
    limitOverridesSchema,
    'an object {"<subject>":{"qps"?,"burst"?,"concurrency"?}}',
  )
    .optional()
    .transform((v) => v ?? {}),
  /** An idle upstream connection is abandoned after this long. */
  GATEWAY_UPSTREAM_TIMEOUT_MS: env.int(120_000, 1000),
  /** Keep-alive connections per upstream service for requests without a body (reads); more wait their turn. */
  GATEWAY_UPSTREAM_SOCKETS: env.int(64, 1, 10_000),
  /**
   * An idle keep-alive connection of a client is closed after this long. Behind a reverse proxy it must exceed the
   * proxy's own idle time for its connections to the gateway (Traefik 90 s, nginx and cloud load balancers 60 s):
   * otherwise the proxy may send a request on a connection the gateway is closing, and answers 502 for it.
   */
  GATEWAY_KEEPALIVE_MS: env.int(SERVER_LIMITS.keepAliveTimeoutMs, 1000, 3_600_000),
  /** An upload that sends no byte for this long is cut (answered 400 when nothing was answered yet). */
  GATEWAY_UPLOAD_IDLE_MS: env.int(30_000, 100, 3_600_000),
  /** An event stream whose client took nothing for this long, every buffer towards it full, is closed. */
  GATEWAY_STREAM_STALL_MS: env.int(30_000, 100, 600_000),
  GATEWAY_OPENAPI_FILE: z.string().optional(),
  /** The web console's build output (default: packages/console/dist of this checkout). */
  GATEWAY_CONSOLE_DIR: z.string().optional(),
  /** How the door sets the calls that run at once per upstream (use-cases/door.ts, docs/OVERLOAD.md). */
  GATEWAY_ADMISSION: z.enum(['reports', 'gradient', 'off']).default('reports'),
  /** A successful key lookup is reused this long; a revoked key stops working within it. 0 disables. */
  GATEWAY_AUTH_CACHE_MS: env.int(5000, 0, 300_000),
};

export type GatewayConfig = z.infer<z.ZodObject<typeof gatewayShape>>;

export function loadGatewayConfig(source: Record<string, string | undefined>): GatewayConfig {
  return loadConfig(gatewayShape, source);
}
