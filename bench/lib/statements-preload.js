'use strict';
/**
 * Preloaded into a service process by the cost bench (`node --require`): counts the statements it sends to its
 * database and the messages it publishes, by service (test/helpers/statements.js), and on SIGUSR2 writes them
 * to `$VISION_STATEMENTS_DIR/<pid>.json` as `{ dumps, statements, messages }` (`dumps` counts the writes), which
 * bench/lib/statements.js reads.
 */
const fs = require('node:fs');
const path = require('node:path');
const { install, counts } = require('../../test/helpers/statements');

const dir = process.env.VISION_STATEMENTS_DIR;
if (dir) {
  // After the services' own modules loaded (PGlite, @vision/shared); `pg`, which knex loads when it connects, is
  // wrapped at the first read, before the bench's warm-up round, whose counts it does not use.
  setImmediate(install);
  let dumps = 0;
  process.on('SIGUSR2', () => {
    try {
      install();
      const file = path.join(dir, `${process.pid}.json`);
      fs.writeFileSync(`${file}.tmp`, JSON.stringify({ dumps: ++dumps, ...counts() }));
      fs.renameSync(`${file}.tmp`, file);
    } catch (err) {
      process.stderr.write(`statement counts not written: ${err}\n`);
    }
  });
}
