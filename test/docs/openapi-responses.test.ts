/**
 * docs/openapi.yaml lists, on every operation behind the API key, the answers the gateway can give any such
 * call: 401 (no valid key) and 429 (the per-subject rate limit and quota apply to every authenticated
 * request, HEAD included) with its Retry-After header.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { repoRoot } from '../deploy/deploy-support';

type Json = Record<string, unknown>;

const doc = parse(readFileSync(path.join(repoRoot, 'docs/openapi.yaml'), 'utf8')) as Json;
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

function deref(node: unknown): Json {
  let cur = node as Json;
  while (cur && typeof cur.$ref === 'string') {
    let target: unknown = doc;
    for (const p of cur.$ref.replace(/^#\//, '').split('/')) target = (target as Json)[p];
    cur = target as Json;
  }
  return cur;
}

interface Operation {
  label: string;
  responses: Json;
}

/** Operations whose effective security is not empty (the document's default, or their own). */
function authenticatedOperations(): Operation[] {
  const out: Operation[] = [];
  for (const [route, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const security = (op.security ?? doc.security) as unknown[] | undefined;
      if (!security || security.length === 0) continue;
      out.push({ label: `${method.toUpperCase()} ${route}`, responses: op.responses as Json });
    }
  }
  return out;
}

describe('docs/openapi.yaml: answers of every authenticated operation', () => {
  const ops = authenticatedOperations();

  it('finds the authenticated operations, HEAD of the task video among them', () => {
    expect(ops.length).toBeGreaterThan(10);
    expect(ops.map((o) => o.label)).toContain('HEAD /v1/vision/tasks/{task_id}/video');
  });

  it.each(ops.map((o) => [o.label, o] as const))('%s documents 401 and 429 with Retry-After', (_, op) => {
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '429']));
    const headers = (deref(op.responses['429']).headers ?? {}) as Json;
    expect(Object.keys(headers)).toContain('Retry-After');
  });
});
