/**
 * A task's stream URL (which may carry a camera's password or a signed query) is stored sealed, the way
 * results seals webhook secrets (SecretBox of @vision/shared), under TASKS_STREAM_URL_KEY or a key derived
 * from the tasks service's identity key. Only the job submission opens it.
 */
import { createHmac } from 'node:crypto';
import { type Knex, SecretBox, isSealed } from '@vision/shared';

const PURPOSE = 'vision.tasks.stream-url.v1';
const DIGEST_PURPOSE = 'vision.tasks.stream-url-digest.v1';

export class StreamUrlSeal {
  private readonly box: SecretBox;
  private readonly digestKey: Buffer;

  constructor(key: string) {
    this.box = new SecretBox(key, PURPOSE, 'TASKS_STREAM_URL_KEY');
    this.digestKey = createHmac('sha256', key).update(DIGEST_PURPOSE).digest();
  }

  /**
   * A keyed digest of a URL (HMAC-SHA256 under a key derived from the seal's): what an idempotency
   * fingerprint holds of a stream URL, so that a stored fingerprint cannot be used to guess the URL's
   * password without the key.
   */
  digest(url: string): string {
    return createHmac('sha256', this.digestKey).update(url).digest('hex');
  }

  seal(url: string): string {
    return this.box.seal(url);
  }

  /**
   * The URL a stored value holds: opened when sealed, as stored when an earlier release wrote it in plain
   * text (a URL has a `:`, a sealed value never), undefined when it was sealed under another key.
   */
  open(stored: string): string | undefined {
    return isSealed(stored) ? this.box.open(stored) : stored;
  }
}

/**
 * Seals the stream URLs that rows written before sealing hold in plain text, `batch` rows at a time; each
 * row is rewritten only if it still holds the value read (a row changed meanwhile is left to the next
 * pass). Runs at every start: the schema migrations run without the key (the chart's migration Job), and
 * a replica of an earlier release may write plain rows during a rolling upgrade. Returns the rows sealed.
 */
export async function sealStoredStreamUrls(knex: Knex, seal: StreamUrlSeal, batch = 200): Promise<number> {
  let sealed = 0;
  for (;;) {
    const rows = await knex('tasks')
      .select<{ task_id: string; stream_url: string }[]>('task_id', 'stream_url')
      .whereNotNull('stream_url')
      .andWhereNot('stream_url', 'like', 'v1.%')
      .orderBy('task_id')
      .limit(batch);
    let changed = 0;
    for (const row of rows)
      changed += await knex('tasks')
        .where({ task_id: row.task_id, stream_url: row.stream_url })
        .update({ stream_url: seal.seal(row.stream_url) });
    sealed += changed;
    if (rows.length < batch || changed === 0) return sealed;
  }
}
