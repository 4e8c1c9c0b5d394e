import { affectedRows, type Knex } from '@vision/shared';
import type { EndpointRow } from '../domain/webhooks/rows';

export type { EndpointRow };

const date = (v: unknown): Date | null => (v === null || v === undefined ? null : new Date(v as string));

function fromRow(r: Record<string, unknown>): EndpointRow {
  const types = typeof r.event_types === 'string' ? (JSON.parse(r.event_types) as string[]) : r.event_types;
  return {
    ...(r as unknown as EndpointRow),
    event_types: types as string[],
    previous_secret_until: date(r.previous_secret_until),
    disabled_at: date(r.disabled_at),
    created_at: new Date(r.created_at as string),
    updated_at: new Date(r.updated_at as string),
  };
}

/** SQL of webhook endpoints (schema `results`). Every read and write is scoped to the owning subject. */
export class WebhookEndpointsStore {
  constructor(private readonly knex: Knex) {}

  async count(subject: string): Promise<number> {
    const [row] = (await this.knex('webhook_endpoints').where({ subject }).count({ n: '*' })) as {
      n: string | number;
    }[];
    return Number(row?.n ?? 0);
  }

  /** Inserts the endpoint unless the subject already has `max` of them; false when it had. */
  async insertWithin(
    row: Omit<
      EndpointRow,
      'previous_secret_sealed' | 'previous_secret_until' | 'disabled_reason' | 'disabled_at'
    >,
    max: number,
  ): Promise<boolean> {
    const r = (await this.knex.raw(
      `INSERT INTO webhook_endpoints (endpoint_id, subject, url, event_types, description, secret_sealed, enabled,
         created_at, updated_at)
       SELECT ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?
       WHERE (SELECT count(*) FROM webhook_endpoints WHERE subject = ?) < ?
       RETURNING endpoint_id`,
      [
        row.endpoint_id,
        row.subject,
        row.url,
        JSON.stringify(row.event_types),
        row.description,
        row.secret_sealed,
        row.enabled,
        row.created_at,
        row.updated_at,
        row.subject,
        max,
      ],
    )) as { rows: unknown[] };
    return r.rows.length === 1;
  }

  async get(subject: string, endpointId: string): Promise<EndpointRow | undefined> {
    const r = (await this.knex('webhook_endpoints').where({ subject, endpoint_id: endpointId }).first()) as
      Record<string, unknown> | undefined;
    return r ? fromRow(r) : undefined;
  }

  async byIds(ids: string[]): Promise<Map<string, EndpointRow>> {
    if (ids.length === 0) return new Map();
    const rows = (await this.knex('webhook_endpoints').whereIn('endpoint_id', ids)) as Record<
      string,
      unknown
    >[];
    return new Map(rows.map((r) => [String(r.endpoint_id), fromRow(r)]));
  }

  async list(subject: string): Promise<EndpointRow[]> {
    const rows = (await this.knex('webhook_endpoints')
      .where({ subject })
      .orderBy([{ column: 'created_at' }, { column: 'endpoint_id' }])) as Record<string, unknown>[];
    return rows.map(fromRow);
  }

  /**
   * Enabled endpoints of these subjects subscribed to `type` that existed when the event happened (an
   * endpoint registered later does not get earlier events, also when the bus delivers them again).
   */
  async subscribers(subjects: string[], type: string, q: Knex = this.knex): Promise<EndpointRow[]> {
    if (subjects.length === 0) return [];
    const rows = (await q('webhook_endpoints')
      .whereIn('subject', [...new Set(subjects)])
      .andWhere('enabled', true)
      .andWhereRaw('event_types @> ?::jsonb', [JSON.stringify([type])])) as Record<string, unknown>[];
    return rows.map(fromRow);
  }

  /** Replaces the secret; the old one keeps signing until `previousUntil`. */
  async rotate(
    subject: string,
    endpointId: string,
    sealed: string,
    previousSealed: string,
    previousUntil: Date,
    now: Date,
  ): Promise<EndpointRow | undefined> {
    const [r] = (await this.knex('webhook_endpoints')
      .where({ subject, endpoint_id: endpointId })
      .update({
        secret_sealed: sealed,
        previous_secret_sealed: previousSealed,
        previous_secret_until: previousUntil,
        updated_at: now,
      })
      .returning('*')) as Record<string, unknown>[];
    return r ? fromRow(r) : undefined;
  }

  /** Drops the rotated-out secret at once: only the current one signs from now on. */
  async revokePrevious(subject: string, endpointId: string, now: Date): Promise<EndpointRow | undefined> {
    const [r] = (await this.knex('webhook_endpoints')
      .where({ subject, endpoint_id: endpointId })
      .update({ previous_secret_sealed: null, previous_secret_until: null, updated_at: now })
      .returning('*')) as Record<string, unknown>[];
    return r ? fromRow(r) : undefined;
  }

  /** Deletes the endpoint with its deliveries and attempts; false when it did not exist. */
  async delete(subject: string, endpointId: string): Promise<boolean> {
    const n = await this.knex('webhook_endpoints').where({ subject, endpoint_id: endpointId }).delete();
    return affectedRows(n) > 0;
  }
}
