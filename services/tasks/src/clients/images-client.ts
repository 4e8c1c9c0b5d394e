/** The images service's record of an image call (docs/INTERNAL.md, images: GET /internal/v1/calls/{task_id}). */
import { type Identity, type Logger, type ServiceClient, UnreachableError } from '@vision/shared';
import { type ImageCallRecord, imageCallRecordSchema } from '../domain/image-call';

export class ImagesClient {
  constructor(
    private readonly client: ServiceClient,
    private readonly logger: Logger,
    private readonly timeoutMs = 2_000,
  ) {}

  /**
   * The caller's image call `taskId` once its results are stored; undefined when images does not know it
   * for this caller, and when images cannot be asked or answers amiss (logged: the read answers as a miss).
   */
  async callRecord(identity: Identity, taskId: string): Promise<ImageCallRecord | undefined> {
    let r;
    try {
      r = await this.client.call<unknown>(`/internal/v1/calls/${encodeURIComponent(taskId)}`, {
        identity,
        timeoutMs: this.timeoutMs,
      });
    } catch (err) {
      if (!(err instanceof UnreachableError)) throw err;
      this.logger.warn({ task_id: taskId }, 'images could not be asked for an image call');
      return undefined;
    }
    if (r.status === 404) return undefined;
    const parsed = r.status === 200 ? imageCallRecordSchema.safeParse(r.body) : undefined;
    if (!parsed?.success || parsed.data.task_id !== taskId || parsed.data.subject !== identity.subject) {
      this.logger.warn({ task_id: taskId, status: r.status }, 'images answered an image call read amiss');
      return undefined;
    }
    return parsed.data;
  }
}
