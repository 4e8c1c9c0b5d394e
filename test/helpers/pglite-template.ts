/**
 * Jest's global set-up: a tarball of one fresh PGlite data directory (one initdb, a few seconds), which every
 * new database of the run, in memory or on disk (each standalone stack's), loads instead of running initdb
 * again (VISION_PGLITE_TEMPLATE, packages/shared/src/db/pglite-loader.ts and pglite-shared.ts).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshDataDirTarball } from '../../packages/shared/src/db/pglite-loader';

export default async function pgliteTemplate(): Promise<void> {
  if (process.env.VISION_PGLITE_TEMPLATE) return;
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'vision-pglite-template-')), 'fresh.tar');
  writeFileSync(file, await freshDataDirTarball());
  process.env.VISION_PGLITE_TEMPLATE = file;
}
