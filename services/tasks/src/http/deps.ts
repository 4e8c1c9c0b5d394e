import type { AdmissionQueue, HostResolver, ObjectStore, SceneGate } from '@vision/shared';
import type { TaskContext } from '../ports';
import type { CreateTask } from '../use-cases/create-task';
import type { ImageCalls } from '../use-cases/image-calls';

/** What the HTTP layer works with: the use cases and the few adapters routes need directly. */
export interface HttpDeps {
  ctx: TaskContext;
  create: CreateTask;
  scenes: SceneGate;
  /** Image calls whose record has not arrived yet, read from the images service. */
  imageCalls: Pick<ImageCalls, 'lookup'>;
  /** The full object store (uploads stream into it). */
  objects: ObjectStore;
  adminToken?: string;
  /** The bounded, fair queue task creations wait in for their turn. */
  admission: AdmissionQueue;
  settings: {
    allowPrivateNetworks: boolean;
    probeTimeoutMs: number;
    ffprobePath: string;
    /** Egress proxy for the probe's HTTP(S) connections (startEgressProxy). */
    httpProxy?: string;
    /** The resolver of callers' stream hosts (streamResolver: bounded, off the thread pool). */
    resolveHost?: HostResolver;
    maxVideoBytes: number;
    businessThreshold: number;
    retentionDays: number;
  };
}
