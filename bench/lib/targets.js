'use strict';
/**
 * How every bench reports its targets, one line each and a closing count, so that one reader
 * (scripts/docs/performance-table.js) turns any bench's output into the table of docs/PERFORMANCE.md:
 *
 *   target NAME: VALUE (limit LIMIT) MET|MISSED
 *   targets: N met, M missed
 *
 * `checks`: [{ name, value, limit, ok }]; value and limit are printed as given. Returns the counts.
 */
function report(checks) {
  let met = 0;
  for (const c of checks) {
    if (c.ok) met++;
    console.log(`target ${c.name}: ${c.value} (limit ${c.limit}) ${c.ok ? 'MET' : 'MISSED'}`);
  }
  console.log(`targets: ${met} met, ${checks.length - met} missed`);
  return { met, missed: checks.length - met };
}

module.exports = { report };
