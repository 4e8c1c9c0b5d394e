import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { callersOf, IDENTITY_SERVICES, loadConfig } from '@vision/shared';
import { gatewayShape } from '../../services/gateway/src/config';
import { fullShape as tasksShape } from '../../services/tasks/src/config';
import { quotaShape } from '../../services/quota/src/config';
import { resultsShape } from '../../services/results/src/config';
import { configShape as imagesShape } from '../../services/images/src/config';
import { inferenceShape } from '../../services/inference/src/config';

export const repoRoot = path.resolve(__dirname, '../..');

export const SERVICES = IDENTITY_SERVICES;
export type ServiceName = (typeof SERVICES)[number];
/** The port each service listens on (docker-compose.yml, the chart). */
export const SERVICE_PORTS: Record<ServiceName, number> = {
  gateway: 8080,
  tasks: 8101,
  quota: 8102,
  results: 8103,
  images: 8104,
  inference: 8105,
};

/** The configuration schema each service validates its environment with (its config.ts). */
export const SHAPES: Record<ServiceName, z.ZodRawShape> = {
  gateway: gatewayShape,
  tasks: tasksShape,
  quota: quotaShape,
  results: resultsShape,
  images: imagesShape,
  inference: inferenceShape,
};

/** Who calls whom (docs/INTERNAL.md): the callers whose identity keys each service accepts (identity.ts). */
export const CALLERS = Object.fromEntries(
  SERVICES.filter((s) => s !== 'gateway').map((s) => [s, callersOf(s) as ServiceName[]]),
) as Record<Exclude<ServiceName, 'gateway'>, ServiceName[]>;

/** Variables an adapter factory needs in distributed mode (packages/shared/src/bus, db, object-store, limiter). */
const ADAPTER_NEEDS: Record<string, string[]> = {
  openDb: ['DATABASE_URL'],
  createBus: ['KAFKA_BROKERS'],
  createObjectStore: ['S3_ENDPOINT', 'S3_ACCESS_KEY', 'S3_SECRET_KEY'],
  createLimiter: ['REDIS_URL'],
};

/**
 * Variables a service needs in distributed mode, derived from its code: VISION_IDENTITY_DIR (every service
 * signs or verifies the identity header), every variable of its schema without a default, what the
 * adapter factories its index.ts calls need, and each peer URL (the defaults point at 127.0.0.1, which
 * is wrong anywhere but the standalone process).
 */
export function requiredVariables(service: ServiceName): string[] {
  const shape = SHAPES[service];
  const out = new Set<string>(['VISION_MODE', 'VISION_IDENTITY_DIR']);
  for (const [name, schema] of Object.entries(shape)) {
    if (!schema.safeParse(undefined).success) out.add(name);
    const def = schema.safeParse(undefined);
    if (/_URL$/.test(name) && def.success && typeof def.data === 'string' && def.data.includes('127.0.0.1'))
      out.add(name);
  }
  const source = readFileSync(path.join(repoRoot, 'services', service, 'src', 'index.ts'), 'utf8');
  for (const [factory, vars] of Object.entries(ADAPTER_NEEDS))
    if (new RegExp(`\\b${factory}\\(`).test(source)) vars.forEach((v) => out.add(v));
  if (service === 'inference') out.add('VISION_MODELS_DIR');
  return [...out].sort();
}

/** Validates an environment with the service's own schema (throws ConfigError naming the variable). */
export function validateEnv(service: ServiceName, env: Record<string, string>): void {
  loadConfig(SHAPES[service], env);
}
