'use strict';
/**
 * Jest's global set-up: a tarball of one fresh PGlite data directory, which every in-memory database of the run
 * loads instead of running initdb again (VISION_PGLITE_TEMPLATE, packages/shared/src/adapters/pglite-loader.ts).
 * It is kept in the temporary directory, one per PGlite version, and written once. Databases on disk (the
 * standalone stacks) keep their own initdb.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

module.exports = async function pgliteTemplate() {
  if (process.env.VISION_PGLITE_TEMPLATE) return;
  const main = require.resolve('@electric-sql/pglite');
  const pkg = path.join(main.slice(0, main.lastIndexOf(`${path.sep}dist${path.sep}`)), 'package.json');
  const { version } = JSON.parse(fs.readFileSync(pkg, 'utf8'));
  const file = path.join(os.tmpdir(), `vision-pglite-template-${version}.tar`);
  if (!fs.existsSync(file)) {
    const { PGlite } = require('@electric-sql/pglite');
    const db = new PGlite();
    await db.waitReady;
    const dump = await db.dumpDataDir('none');
    await db.close();
    const part = `${file}.${process.pid}`;
    fs.writeFileSync(part, Buffer.from(await dump.arrayBuffer()));
    fs.renameSync(part, file);
  }
  process.env.VISION_PGLITE_TEMPLATE = file;
};
