import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import globals from 'globals';

/** What `domain/` folders may not import: Node built-ins and packages that do I/O (files, sockets, processes,
 * databases, brokers, caches, object stores, HTTP servers and clients, native inference, image codecs, upload
 * parsers). Built-ins are listed bare; their `node:` spelling is added below. */
const NODE_IO =
  'fs fs/promises net tls dgram dns dns/promises http https http2 child_process cluster worker_threads';
const PACKAGE_IO =
  'pg knex kafkajs ioredis minio express busboy @fastify/busboy undici onnxruntime-node sharp http-proxy supertest';
const IO_IMPORTS = [
  ...NODE_IO.split(' ').flatMap((name) => [name, `node:${name}`]),
  ...PACKAGE_IO.split(' '),
];

const PURE = 'domain/ is pure: do I/O in store/, http/ or workers/ and pass plain values in.';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'data/**', 'coverage/**', 'charts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    // Type-aware rules read the types of the whole repository through the root tsconfig.json (its paths point every
    // @vision/* import at the sources, so linting needs no build).
    languageOptions: {
      // The web console is browser code (DOM types, ES modules): its own tsconfig; so are the browser tests, whose
      // page functions run in the page (tsconfig.browser-tests.json).
      parserOptions: {
        project: ['./tsconfig.json', './tsconfig.browser-tests.json', './packages/console/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      'no-redeclare': ['error', { builtinGlobals: false }],
    },
  },
  {
    // domain/ is pure: rules and decisions over plain values, no I/O. Adapters live in store/, http/, workers/.
    files: ['**/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: IO_IMPORTS.map((name) => ({ name, message: PURE })),
          patterns: [{ group: ['**/store/*', '**/http/*', '**/workers/*', '**/adapters/*'], message: PURE }],
        },
      ],
    },
  },
  {
    // No source module over 300 lines (generated code aside): split by what the parts hold.
    files: ['apps/*/src/**', 'packages/*/src/**', 'services/*/src/**', 'scripts/**', 'bench/**'],
    ignores: ['packages/*/src/generated/**'],
    rules: { 'max-lines': ['error', { max: 300 }] },
  },
);
