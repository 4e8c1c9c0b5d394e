import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

type Json = Record<string, unknown>;

const doc = parse(readFileSync(path.resolve(__dirname, '../../docs/openapi.yaml'), 'utf8')) as Json;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ ...doc, $id: 'openapi' });

const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

function deref(node: unknown): Json {
  let cur = node as Json;
  while (cur && typeof cur.$ref === 'string') {
    const ptr = (cur.$ref as string).replace(/^#\//, '').split('/');
    let target: unknown = doc;
    for (const p of ptr) target = (target as Json)[p.replace(/~1/g, '/').replace(/~0/g, '~')];
    cur = target as Json;
  }
  return cur;
}

function templateFor(actualPath: string): string | undefined {
  const paths = Object.keys(doc.paths as Json);
  const exact = paths.find((p) => p === actualPath);
  if (exact) return exact;
  return paths.find((p) => {
    const re = new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    return re.test(actualPath);
  });
}

/**
 * Validates one response against docs/openapi.yaml: the path and method must be documented, the
 * status must be listed, and a JSON body must match its schema. Throws with the reasons otherwise.
 */
export function assertMatchesOpenApi(
  method: string,
  urlPath: string,
  status: number,
  contentType: string | undefined,
  body: unknown,
): void {
  const pathOnly = urlPath.split('?')[0];
  const template = templateFor(pathOnly);
  if (!template) throw new Error(`OpenAPI: path ${pathOnly} is not documented`);
  const op = (doc.paths as Json)[template] as Json;
  const operation = op[method.toLowerCase()] as Json | undefined;
  if (!operation) throw new Error(`OpenAPI: ${method} ${template} is not documented`);
  const responses = operation.responses as Json;
  const key = String(status) in responses ? String(status) : 'default' in responses ? 'default' : undefined;
  if (!key) throw new Error(`OpenAPI: ${method} ${template} does not document status ${status}`);
  const response = deref(responses[key]);
  const content = response.content as Json | undefined;
  if (!content) return;
  // A documented non-JSON media type (a video download) is checked by type only.
  const mediaType = contentType?.split(';')[0].trim();
  if (mediaType && mediaType !== 'application/json' && mediaType in content) return;
  if (!contentType?.includes('application/json'))
    throw new Error(`OpenAPI: ${method} ${template} ${status} expected JSON, got ${contentType}`);
  const schemaRef = (responses[key] as Json).$ref
    ? `openapi#/${((responses[key] as Json).$ref as string).replace(/^#\//, '')}/content/application~1json/schema`
    : `openapi#/paths/${escape(template)}/${method.toLowerCase()}/responses/${key}/content/application~1json/schema`;
  const validate = ajv.getSchema(schemaRef) ?? ajv.compile({ $ref: schemaRef });
  if (!validate(body))
    throw new Error(
      `OpenAPI: ${method} ${pathOnly} ${status} body does not match: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`,
    );
}
