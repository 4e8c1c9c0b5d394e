#!/usr/bin/env node
/**
 * Generates packages/sdk/src/generated/openapi.ts from docs/openapi.yaml with openapi-typescript,
 * formatted with the repository's prettier settings.
 *
 *   npm run sdk:generate          rewrite the committed types
 *   npm run sdk:check             fail (exit 1) when the committed types differ from the document
 */
const { readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '../../..');
const documentPath = path.join(root, 'docs/openapi.yaml');
const outputPath = path.join(root, 'packages/sdk/src/generated/openapi.ts');
const HEADER = [
  '// Generated from docs/openapi.yaml by `npm run sdk:generate` (openapi-typescript). Do not edit by hand.',
  '',
].join('\n');

async function render() {
  const { default: openapiTS, astToString } = await import('openapi-typescript');
  const prettier = await import('prettier');
  const ast = await openapiTS(readFileSync(documentPath, 'utf8'), { alphabetize: false });
  const source = HEADER + astToString(ast);
  const options = (await prettier.resolveConfig(outputPath)) ?? {};
  return prettier.format(source, { ...options, filepath: outputPath });
}

async function main() {
  const check = process.argv.includes('--check');
  const wanted = await render();
  let current;
  try {
    current = readFileSync(outputPath, 'utf8');
  } catch {
    current = '';
  }
  const rel = path.relative(root, outputPath);
  if (check) {
    if (current !== wanted) {
      process.stderr.write(
        `${rel} is out of date with docs/openapi.yaml.\n` +
          'Fix: run `npm run sdk:generate` and commit the regenerated file (then `npm run build`).\n',
      );
      process.exit(1);
    }
    process.stdout.write(`${rel} matches docs/openapi.yaml\n`);
    return;
  }
  if (current === wanted) {
    process.stdout.write(`${rel} is up to date\n`);
    return;
  }
  writeFileSync(outputPath, wanted);
  process.stdout.write(`wrote ${rel}\n`);
}

main().catch((err) => {
  if (err && (err.code === 'ERR_MODULE_NOT_FOUND' || err.code === 'MODULE_NOT_FOUND'))
    process.stderr.write('openapi-typescript is not installed: run `npm install` first.\n');
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
