import type { PGlite, Results, parse, protocol } from '@electric-sql/pglite';

/** What of PGlite's module the prepared statements use: its protocol's messages and its reader of results. */
export interface PGliteProtocol {
  protocol: typeof protocol;
  parse: typeof parse;
}

/** Statements kept prepared at most; the least recently run is closed for a new one beyond. */
export const PREPARED_CAPACITY = 200;

/** Postgres' answer to a cached statement whose result columns changed under it (a table altered since). */
const RESULT_TYPE_CHANGED = '0A000';

/**
 * Named prepared statements on one PGlite. PGlite's `query` parses, describes, plans and runs a statement in six calls
 * into its WebAssembly on every run; a statement prepared here is parsed and described once, then each run binds,
 * describes, executes and syncs in one call, on a plan Postgres caches and re-plans by itself when what it reads changes
 * (the plan cache of named statements, as a pooled Postgres client's). Parameters are serialised and rows parsed by
 * PGlite's own serialisers and parsers, from the statement's described types, as `query` does: the results are the
 * same. A statement is kept under a key (the schema with the text: the same text in another schema is another
 * statement), the last PREPARED_CAPACITY keys at most. Runs must not overlap: the caller holds the connection.
 */
export class PreparedStatements {
  private readonly held = new Map<string, { name: string; types: number[] }>();
  /** Statements evicted or invalidated, closed in front of the next message. */
  private closing: string[] = [];
  private next = 0;

  constructor(
    private readonly pg: PGlite,
    private readonly mod: PGliteProtocol,
    private readonly capacity = PREPARED_CAPACITY,
  ) {}

  /** The results of `sql` with `params`, as PGlite's `query(sql, params)` gives them. */
  async run(key: string, sql: string, params: readonly unknown[]): Promise<Results> {
    const { serialize } = this.mod.protocol;
    const statement = this.held.get(key) ?? (await this.prepare(key, sql));
    // The most recently run last: the first key is the one evicted.
    this.held.delete(key);
    this.held.set(key, statement);
    const values = params.map((value, i) => {
      if (value === null || value === undefined) return null;
      const serializer = this.pg.serializers[statement.types[i]];
      return serializer ? serializer(value) : String(value);
    });
    try {
      const { messages } = await this.pg.execProtocol(
        this.withClosing([
          serialize.bind({ statement: statement.name, values }),
          serialize.describe({ type: 'P' }),
          serialize.execute({}),
          serialize.sync(),
        ]),
      );
      return this.mod.parse.parseResults(messages, this.pg.parsers)[0];
    } catch (err) {
      if ((err as { code?: unknown }).code !== RESULT_TYPE_CHANGED) throw err;
      // Prepared before a table it reads was altered: prepared again at its next run. Outside a transaction the
      // statement runs now as PGlite's own `query` would; inside, the transaction is already aborted.
      this.held.delete(key);
      this.closing.push(statement.name);
      if (this.pg.isInTransaction()) throw err;
      return this.pg.query(sql, [...params]);
    }
  }

  /** Parses and describes `sql` under a new name, closing the least recently run statement beyond the capacity. */
  private async prepare(key: string, sql: string): Promise<{ name: string; types: number[] }> {
    const { serialize } = this.mod.protocol;
    while (this.held.size >= this.capacity) {
      const [oldest, old] = this.held.entries().next().value as [string, { name: string }];
      this.held.delete(oldest);
      this.closing.push(old.name);
    }
    const name = `vision_${++this.next}`;
    const { messages } = await this.pg.execProtocol(
      this.withClosing([
        serialize.parse({ name, text: sql }),
        serialize.describe({ type: 'S', name }),
        serialize.sync(),
      ]),
      { syncToFs: false },
    );
    const described = messages.find((m) => m.name === 'parameterDescription') as
      { dataTypeIDs: number[] } | undefined;
    const statement = { name, types: described?.dataTypeIDs ?? [] };
    this.held.set(key, statement);
    return statement;
  }

  /** `parts` as one message, after the Close of each statement let go since the last. */
  private withClosing(parts: Uint8Array[]): Uint8Array {
    const closes = this.closing.map((name) => this.mod.protocol.serialize.close({ type: 'S', name }));
    this.closing = [];
    return Buffer.concat([...closes, ...parts]);
  }
}
