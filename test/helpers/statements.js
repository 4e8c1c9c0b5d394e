'use strict';
/**
 * Counts what the services of this process ask of their database and their bus, by service (`currentService()`
 * of @vision/shared): every statement sent to the database (each call into PGlite's `query` or `exec` and each run
 * of a statement it keeps prepared, the standalone database, search_path switches and transaction control included;
 * each `query` of a `pg` client,
 * Postgres) and every message published on the bus (each bus adapter's `publish`, counted by message).
 * Used by test/standalone/statements-per-call.test.ts and, through bench/lib/statements-preload.js, by the cost
 * bench's service processes. `install()` patches the prototypes of the modules loaded so far (once each);
 * `counts()` reads the totals so far; `record()` keeps each statement (its service, its text and how many rows it
 * answered) until `recorded()` takes them.
 */
const Module = require('node:module');

/** statements and messages by service, since install(). */
const totals = { statements: {}, messages: {} };
/** The statements kept since record(), when recording. */
let kept;

function service() {
  // Required lazily: the services' own code loads the module first (the same instance).
  return require('@vision/shared').currentService();
}

function add(kind, who, n) {
  totals[kind][who] = (totals[kind][who] ?? 0) + n;
}

/** The prototype up the chain from `proto` that defines `name`. */
function owner(proto, name) {
  for (let p = proto; p; p = Object.getPrototypeOf(p))
    if (Object.prototype.hasOwnProperty.call(p, name)) return p;
  return undefined;
}

/** Where a wrapped method finds the counter to call: PGlite's class outlives a jest test file's sandbox. */
const HOOK = Symbol.for('vision.statements.hook');

/**
 * Wraps `name` of `proto`'s chain once; each install() points it at its own `onCall` (a later test file's
 * sandbox replaces an earlier one's, which is then free to go).
 */
function wrap(proto, name, onCall) {
  const at = owner(proto, name);
  if (!at) return;
  const original = at[name];
  if (!original[HOOK]) {
    const counted = function counted(...args) {
      const answered = original.apply(this, args);
      counted[HOOK]?.(args, answered);
      return answered;
    };
    at[name] = counted;
  }
  at[name][HOOK] = onCall;
}

/** Counts a statement; when recording, keeps it with the number of rows it answered once it has. */
function statement(sql, answered) {
  const who = service();
  add('statements', who, 1);
  if (!kept) return;
  const entry = { service: who, sql: String(sql).replace(/\s+/g, ' ').trim(), rows: -1 };
  kept.push(entry);
  Promise.resolve(answered).then(
    (r) => {
      const rows = Array.isArray(r) ? r.at(-1)?.rows : r?.rows;
      entry.rows = Array.isArray(rows) ? rows.length : 0;
    },
    () => undefined,
  );
}

/** The module `name` as the services loaded it (Node's own cache: PGlite is loaded outside jest's sandbox, pglite-loader.ts). */
function loaded(name) {
  try {
    return Module._cache[require.resolve(name)]?.exports;
  } catch {
    return undefined;
  }
}

/** Wraps what is loaded now; called again, it wraps what was loaded since (knex loads `pg` when it connects). */
function install() {
  const pglite = loaded('@electric-sql/pglite');
  if (pglite)
    for (const method of ['query', 'exec'])
      wrap(pglite.PGlite.prototype, method, (args, answered) => statement(args[0], answered));
  const pg = loaded('pg');
  if (pg)
    wrap(pg.Client.prototype, 'query', (args, answered) =>
      statement(typeof args[0] === 'string' ? args[0] : args[0]?.text, answered),
    );
  const shared = require('@vision/shared');
  wrap(shared.PreparedStatements.prototype, 'run', (args, answered) => statement(args[1], answered));
  for (const bus of [shared.InProcessBus, shared.KafkaBus, shared.PlatformaticKafkaBus])
    if (bus) wrap(bus.prototype, 'publish', (args) => add('messages', service(), args[1].length));
}

/** A copy of the totals so far. */
function counts() {
  return { statements: { ...totals.statements }, messages: { ...totals.messages } };
}

/** Keeps every statement from now on. */
function record() {
  kept = [];
}

/** The statements kept since record(), and records on from an empty list. */
function recorded() {
  const out = kept ?? [];
  kept = [];
  return out;
}

module.exports = { install, counts, record, recorded };
