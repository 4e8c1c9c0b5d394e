#!/usr/bin/env node
/**
 * Type-checks every ```ts example of the SDK's documentation (docs/SDK.md, packages/sdk/README.md)
 * with `tsc --noEmit`, against the SDK's sources, so a renamed method or a changed type breaks CI
 * instead of the reader. Each block is checked as its own ES module (top-level await allowed).
 *
 *   npm run sdk:check    (together with the drift check of the generated types)
 */
const { execFileSync } = require('node:child_process');
const { mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '../../..');
const DOCS = ['docs/SDK.md', 'packages/sdk/README.md'];

/** The ```ts blocks of a markdown file, with the line each starts on. */
function blocks(file) {
  const lines = readFileSync(path.join(root, file), 'utf8').split('\n');
  const found = [];
  let current;
  lines.forEach((line, i) => {
    if (!current && /^```(ts|typescript)\s*$/.test(line.trim())) current = { line: i + 2, body: [] };
    else if (current && line.trim() === '```') {
      found.push({ line: current.line, code: current.body.join('\n') });
      current = undefined;
    } else if (current) current.body.push(line);
  });
  return found;
}

function main() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vision-sdk-examples-'));
  try {
    const files = [];
    for (const doc of DOCS) {
      for (const b of blocks(doc)) {
        const name = `${doc.replace(/[/.]/g, '_')}_line_${b.line}.ts`;
        // `export {}` makes a block without imports a module too.
        writeFileSync(path.join(dir, name), `${b.code}\nexport {};\n`);
        files.push(name);
      }
    }
    if (files.length === 0) throw new Error(`no \`\`\`ts examples found in ${DOCS.join(', ')}`);
    writeFileSync(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'Bundler',
          lib: ['ES2022', 'DOM'],
          types: ['node'],
          typeRoots: [path.join(root, 'node_modules/@types')],
          skipLibCheck: true,
          noUnusedLocals: false,
          paths: { '@vision/sdk': [path.join(root, 'packages/sdk/src/index.ts')] },
        },
        files,
      }),
    );
    const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
    try {
      execFileSync(process.execPath, [tsc, '-p', dir, '--pretty', 'false'], { stdio: 'pipe', cwd: dir });
    } catch (err) {
      const out = `${err.stdout ?? ''}${err.stderr ?? ''}`;
      process.stderr.write(
        `SDK documentation examples do not compile (file names say the document and the line):\n${out}`,
      );
      process.exit(1);
    }
    process.stdout.write(`${files.length} SDK documentation examples compile (${DOCS.join(', ')})\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
