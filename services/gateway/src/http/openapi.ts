import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/** Finds docs/openapi.yaml: the configured file, else the repository's docs folder. */
export function resolveOpenApiFile(configured?: string): string {
  if (configured) return configured;
  const candidates = [
    path.resolve(__dirname, '../../../../docs/openapi.yaml'),
    path.resolve(process.cwd(), 'docs/openapi.yaml'),
  ];
  const found = candidates.find((c) => existsSync(c));
  if (!found)
    throw new Error(
      `docs/openapi.yaml not found (looked in ${candidates.join(', ')}); set GATEWAY_OPENAPI_FILE`,
    );
  return found;
}

export function loadOpenApi(file: string): Record<string, unknown> {
  const doc: unknown = parse(readFileSync(file, 'utf8'));
  if (typeof doc !== 'object' || doc === null || !('openapi' in doc))
    throw new Error(`${file} is not an OpenAPI document`);
  return doc as Record<string, unknown>;
}
