import {
  AdmissionQueue,
  currentService,
  parseLoadReport,
  runInService,
  type EnterOptions,
  type Turn,
} from '@vision/shared';
import { type ReplicaState, capacityOf, recordReport } from '../domain/door-capacity';
import type { Upstream } from '../domain/routes';

/**
 * How the door sets the calls that run at once per upstream (`GATEWAY_ADMISSION`): `reports`, the sum of
 * the limits the replicas report; `gradient`, an adaptive limit learned from the upstream's latency,
 * starting from the first reports; `off`, no decision at the door (the backends' queues alone).
 */
export type DoorMode = 'reports' | 'gradient' | 'off';

/** The door's queue of each upstream that runs costly work, as the metrics name it. */
const QUEUES: Partial<Record<Upstream, { queue: string; what: string }>> = {
  images: { queue: 'gateway_image_calls', what: 'image calls' },
  tasks: { queue: 'gateway_task_creations', what: 'task creations' },
  results: { queue: 'gateway_replays', what: 'replays' },
};

interface UpstreamDoor {
  replicas: Map<string, ReplicaState>;
  queue?: AdmissionQueue;
}

/**
 * Admission at the door: the calls that need inference are admitted or refused by the gateway, on their
 * head, before anything is forwarded, by the same bounded fair queue the backends run (admission-queue.ts)
 * with the capacity the backends report in their answers (load-report.ts). The backends' own queues stay
 * as the second line. Until an upstream has reported, its calls pass (its own queue decides them).
 */
export class Door {
  private readonly doors = new Map<Upstream, UpstreamDoor>();
  /** The service its queues' metrics belong to (the gateway), whichever answer creates them. */
  private readonly service = currentService();

  constructor(
    private readonly mode: DoorMode,
    private readonly now: () => number = Date.now,
  ) {}

  /** Reads the load report of an answer from `upstream` (the `x-vision-load` header). */
  observe(upstream: Upstream, header: string | string[] | undefined): void {
    const names = QUEUES[upstream];
    if (this.mode === 'off' || !names) return;
    const report = parseLoadReport(header);
    if (!report) return;
    let door = this.doors.get(upstream);
    if (!door) this.doors.set(upstream, (door = { replicas: new Map() }));
    recordReport(door.replicas, report, this.now());
    const capacity = capacityOf(door.replicas);
    if (!capacity) return;
    if (door.queue) return door.queue.resize(capacity.limit, capacity.maxWaitMs);
    door.queue = runInService(
      this.service,
      () =>
        new AdmissionQueue({
          ...names,
          maxInFlight: capacity.limit,
          maxWaitMs: capacity.maxWaitMs,
          limit: this.mode === 'gradient' ? 'gradient' : 'fixed',
          bound: 'answer',
          now: this.now,
        }),
    );
  }

  /**
   * Takes a call's turn at the door of `upstream`: resolves with it (undefined when the upstream has not
   * reported yet), or rejects with 503 `overloaded` or `deadline_exceeded` (admission-queue.ts).
   */
  async enter(upstream: Upstream, subject: string, opts: EnterOptions): Promise<Turn | undefined> {
    const queue = this.doors.get(upstream)?.queue;
    return queue ? queue.enter(subject, opts) : undefined;
  }
}
