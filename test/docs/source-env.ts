/**
 * The environment variables the source reads, found in its text (not a list kept by hand): the keys of every
 * configuration schema (the object literal of a `const …Shape = {` or of a `loadConfig({` call), the variables read
 * directly (`process.env.NAME`, `env.NAME`, `process.env['NAME']`, …), and the options of the command line
 * (`.env('NAME')` of commander).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../deploy/deploy-support';

/** The source folders of what runs as the service: the six services, the shared package, the standalone app. */
function serviceSourceDirs(): string[] {
  const under = (dir: string) =>
    readdirSync(path.join(repoRoot, dir)).map((name) => path.join(dir, name, 'src'));
  return [...under('services'), ...under('apps'), 'packages/shared/src'].filter((d) => {
    try {
      return statSync(path.join(repoRoot, d)).isDirectory();
    } catch {
      return false;
    }
  });
}

function tsFiles(dir: string): string[] {
  return readdirSync(path.join(repoRoot, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'generated' ? [] : tsFiles(rel);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

/** Each source file of the service (relative path) with its text. */
export function serviceSources(): Array<{ file: string; text: string }> {
  return serviceSourceDirs()
    .flatMap(tsFiles)
    .map((file) => ({ file, text: readFileSync(path.join(repoRoot, file), 'utf8') }));
}

/** Where a configuration schema's object literal opens: `const xShape = {` or `loadConfig({`. */
const SCHEMA_START = /(?:\b\w+Shape\s*(?::[^=]+)?=\s*|\bloadConfig\(\s*)\{/g;
const SCHEMA_KEY = /^\s+([A-Z][A-Z0-9_]+)\s*:/gm;

/** The text of each schema literal of a file (from its `{` to the matching `}`). */
function schemaLiterals(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(SCHEMA_START)) {
    const open = (m.index ?? 0) + m[0].length - 1;
    let depth = 0;
    for (let i = open; i < text.length; i++) {
      if (text[i] === '{') depth++;
      else if (text[i] === '}' && --depth === 0) {
        out.push(text.slice(open, i + 1));
        break;
      }
    }
  }
  return out;
}
const DIRECT_READ =
  /\b(?:process\.env|env|source|from)\??\.([A-Z][A-Z0-9_]+)\b|process\.env\[\s*['"]([A-Z][A-Z0-9_]+)['"]\s*\]/g;

export interface EnvReads {
  /** Keys of the configuration schemas, with a file that declares each. */
  schema: Map<string, string>;
  /** Variables read directly, with a file that reads each. */
  direct: Map<string, string>;
}

export function serviceEnvReads(): EnvReads {
  const schema = new Map<string, string>();
  const direct = new Map<string, string>();
  for (const { file, text } of serviceSources()) {
    for (const literal of schemaLiterals(text))
      for (const m of literal.matchAll(SCHEMA_KEY)) if (!schema.has(m[1])) schema.set(m[1], file);
    for (const m of text.matchAll(DIRECT_READ)) {
      const name = m[1] ?? m[2];
      if (!direct.has(name)) direct.set(name, file);
    }
  }
  return { schema, direct };
}

/** The variables the `vision` command reads (`.env('NAME')` of its options). */
export function cliEnvReads(): string[] {
  const found = new Set<string>();
  for (const file of tsFiles('packages/cli/src')) {
    const text = readFileSync(path.join(repoRoot, file), 'utf8');
    for (const m of text.matchAll(/\.env\(\s*['"]([A-Z][A-Z0-9_]+)['"]\s*\)/g)) found.add(m[1]);
  }
  return [...found].sort();
}
