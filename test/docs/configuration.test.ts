/**
 * docs/CONFIGURATION.md lists exactly the variables the services read: every key of each service's configuration
 * schema (services/<name>/src/config.ts, with the common keys of packages/shared/src/config/config.ts) is named in the
 * service's section or under "Every service", and every variable named in a section is read by that service. Beside
 * the schemas it reads the source itself (source-env.ts): every variable the code reads, in a schema or directly, is
 * named on the page, every variable the page names is read, and the variables read outside the schemas are exactly
 * those of "The standalone process". The command line's variables are named in docs/SDK.md.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { commonShape } from '@vision/shared';
import { SERVICES, SHAPES, repoRoot } from '../deploy/deploy-support';
import { cliEnvReads, serviceEnvReads } from './source-env';

const doc = readFileSync(path.join(repoRoot, 'docs/CONFIGURATION.md'), 'utf8');

/** Variables the code reads that are not configuration, and why. */
const NOT_CONFIGURATION: Record<string, string> = {
  PATH: "the system's; the decoders inherit it (decoder-env.ts)",
  JEST_WORKER_ID: 'set by the test runner (pglite-loader.ts)',
};

const reads = serviceEnvReads();
const readByCode = new Set(
  [...reads.schema.keys(), ...reads.direct.keys()].filter((v) => !(v in NOT_CONFIGURATION)),
);
/** Variables read without a schema, and the file that reads each. */
const OUTSIDE_SCHEMAS = Object.fromEntries(
  [...reads.direct].filter(([v]) => !reads.schema.has(v) && !(v in NOT_CONFIGURATION)),
);

/** Every variable named in the first column of a table of the page. */
function documentedAnywhere(): string[] {
  return doc
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...l.split(' | ')[0].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]));
}

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
  it('the source scan finds every key of the service schemas', () => {
    const keys = Object.values(SHAPES).flatMap((s) => Object.keys(s));
    expect(keys.filter((k) => !reads.schema.has(k))).toEqual([]);
  });

  it('every variable the code reads is listed', () => {
    const listed = new Set(documentedAnywhere());
    const missing = [...readByCode].filter((v) => !listed.has(v));
    expect(missing.map((v) => `${v} (${reads.schema.get(v) ?? reads.direct.get(v)})`)).toEqual([]);
  });

  it('every variable listed is read by the code', () => {
    expect(documentedAnywhere().filter((v) => !readByCode.has(v))).toEqual([]);
  });

  it('the variables set aside as not configuration are still read', () => {
    for (const name of Object.keys(NOT_CONFIGURATION))
      expect([name, reads.direct.has(name)]).toEqual([name, true]);
  });

  it("the command line's variables are named in docs/SDK.md", () => {
    const sdk = readFileSync(path.join(repoRoot, 'docs/SDK.md'), 'utf8');
    const vars = cliEnvReads();
    expect(vars.length).toBeGreaterThan(0);
    expect(vars.filter((v) => !sdk.includes(`\`${v}\``))).toEqual([]);
  });

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
    // Its table: the standalone process's own schema (apps/standalone), then the variables read outside the schemas.
    const own = [...reads.schema]
      .filter(([v, file]) => file === 'apps/standalone/src/index.ts' && !read.has(v) && !common.includes(v))
      .map(([v]) => v);
    const listed = documented('The standalone process');
    expect(listed.sort()).toEqual([...own, ...Object.keys(OUTSIDE_SCHEMAS)].sort());
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
