/** The closed vocabulary of details.reason is listed, value for value, in docs/API.md and docs/openapi.yaml. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { REASON, REASONS, invalidRequest, isReason } from '../../src';

const docs = path.resolve(__dirname, '../../../../docs');

test('REASON names each reason by itself', () => {
  for (const r of REASONS) expect(REASON[r]).toBe(r);
  expect(isReason('unknown_field')).toBe(true);
  expect(isReason('unexpected_field')).toBe(false);
  expect(invalidRequest('x', REASON.file_missing).details).toEqual({ reason: 'file_missing' });
});

test('docs/openapi.yaml lists exactly these reasons', () => {
  type Doc = {
    components: {
      schemas: {
        ErrorEnvelope: {
          properties: { error: { properties: { details: { properties: { reason: { enum: string[] } } } } } };
        };
      };
    };
  };
  const doc = parse(readFileSync(path.join(docs, 'openapi.yaml'), 'utf8')) as Doc;
  const listed =
    doc.components.schemas.ErrorEnvelope.properties.error.properties.details.properties.reason.enum;
  expect([...listed].sort()).toEqual([...REASONS].sort());
});

test('docs/API.md "Error reasons" names every reason', () => {
  const md = readFileSync(path.join(docs, 'API.md'), 'utf8');
  const section = md.slice(
    md.indexOf('### Error reasons'),
    md.indexOf('**Scenes and the inference backend**'),
  );
  for (const r of REASONS) expect(section).toContain(`\`${r}\``);
});
