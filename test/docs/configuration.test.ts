/**
 * docs/CONFIGURATION.md lists exactly the variables the services read: every key of each service's configuration
 * schema (services/<name>/src/config.ts, with the common keys of packages/shared/src/config.ts) is named in the
 * service's section or under "Every service", and every variable named in a section is read by that service. The
 * few variables read outside the schemas are named here with the file that reads each.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { commonShape } from '@vision/shared';
import { SERVICES, SHAPES, repoRoot } from '../deploy/deploy-support';

const doc = readFileSync(path.join(repoRoot, 'docs/CONFIGURATION.md'), 'utf8');

/** Variables read without a schema, and the file that reads each. */
const OUTSIDE_SCHEMAS: Record<string, string> = {
  OTEL_SERVICE_NAME: 'apps/standalone/src/main.ts',
  OTEL_TRACES_EXPORTER: 'packages/shared/src/telemetry.ts',
};

/** The variables named in the first column of the tables of one `## ` section (by its heading). */
function documented(heading: string): string[] {
  const start = doc.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/CONFIGURATION.md has no "## ${heading}" section`);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...l.split(' | ')[0].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]));
}

const common = Object.keys(commonShape);

describe('docs/CONFIGURATION.md', () => {
  it('"Every service" lists exactly the common variables', () => {
    expect(documented('Every service').sort()).toEqual([...common].sort());
  });

  it.each(SERVICES.map((s) => [s]))(
    '%s: every variable its schema reads is listed, and nothing else',
    (service) => {
      const keys = Object.keys(SHAPES[service]);
      const own = documented(service);
      const everywhere = new Set([...common, ...own]);
      expect(keys.filter((k) => !everywhere.has(k))).toEqual([]);
      expect(own.filter((k) => !keys.includes(k))).toEqual([]);
      expect(own.filter((k, i) => own.indexOf(k) !== i)).toEqual([]);
    },
  );

  it('the standalone section names only variables that are read', () => {
    const read = new Set(Object.values(SHAPES).flatMap((s) => Object.keys(s)));
    const listed = documented('The standalone process');
    expect(listed.sort()).toEqual(Object.keys(OUTSIDE_SCHEMAS).sort());
    for (const [name, file] of Object.entries(OUTSIDE_SCHEMAS)) {
      expect([name, read.has(name)]).toEqual([name, false]);
      expect([name, readFileSync(path.join(repoRoot, file), 'utf8').includes(name)]).toEqual([name, true]);
    }
    // The standalone process's own ports and defaults, named in its prose, are the services' variables.
    const prose = doc.slice(
      doc.indexOf('\n## The standalone process\n'),
      doc.indexOf('\n| variable', doc.indexOf('\n## The standalone process\n')),
    );
    for (const m of prose.matchAll(/`([A-Z][A-Z0-9_]+)`/g))
      expect([m[1], read.has(m[1])]).toEqual([m[1], true]);
  });
});
