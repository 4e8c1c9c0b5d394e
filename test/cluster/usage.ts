/**
 * What the release's containers use on the node, as the kubelet measures it (GET /api/v1/nodes/NODE/proxy/stats/summary,
 * the figures behind `kubectl top`): sampled while a load runs, per component, the peak working set and RSS and the
 * mean and peak CPU. The chart's default requests and limits come from these figures (docs/KUBERNETES.md, "Requests and limits").
 */
import { get, run } from './node-cluster';

interface ContainerStats {
  name: string;
  cpu?: { usageNanoCores?: number; usageCoreNanoSeconds?: number; time: string };
  memory?: { workingSetBytes?: number; rssBytes?: number };
}
interface Summary {
  pods: { podRef: { name: string; namespace: string }; containers?: ContainerStats[] }[];
}

export interface ComponentUsage {
  /** Peak working set and RSS of one container of the component, MiB. */
  workingSetMiB: number;
  rssMiB: number;
  /** CPU of one container, millicores: the mean over the sampling, and the highest kubelet sample. */
  meanMilli: number;
  peakMilli: number;
}

export interface UsageSampler {
  stop(): Record<string, ComponentUsage>;
}

const MiB = 1024 * 1024;

/** Samples every `everyMs` the containers of `namespace`'s pods until stop(). */
export function sampleUsage(namespace: string, everyMs = 3000): UsageSampler {
  const [node] = get(['nodes']).filter((n) => !n.metadata.annotations?.['kwok.x-k8s.io/node']);
  const usage: Record<string, ComponentUsage> = {};
  // Per container (pod/name): the first and the latest cumulative CPU reading, for the mean.
  const cpu = new Map<string, { component: string; first: [number, number]; last: [number, number] }>();
  const sample = () => {
    let summary: Summary;
    try {
      summary = JSON.parse(
        run('kubectl', ['get', '--raw', `/api/v1/nodes/${node.metadata.name}/proxy/stats/summary`]),
      ) as Summary;
    } catch {
      return; // the next sample will do
    }
    for (const pod of summary.pods) {
      if (pod.podRef.namespace !== namespace) continue;
      for (const c of pod.containers ?? []) {
        const u = (usage[c.name] ??= { workingSetMiB: 0, rssMiB: 0, meanMilli: 0, peakMilli: 0 });
        u.workingSetMiB = Math.max(u.workingSetMiB, Math.round((c.memory?.workingSetBytes ?? 0) / MiB));
        u.rssMiB = Math.max(u.rssMiB, Math.round((c.memory?.rssBytes ?? 0) / MiB));
        u.peakMilli = Math.max(u.peakMilli, Math.round((c.cpu?.usageNanoCores ?? 0) / 1e6));
        if (c.cpu?.usageCoreNanoSeconds === undefined) continue;
        const reading: [number, number] = [Date.parse(c.cpu.time), c.cpu.usageCoreNanoSeconds];
        const key = `${pod.podRef.name}/${c.name}`;
        const seen = cpu.get(key);
        if (seen) seen.last = reading;
        else cpu.set(key, { component: c.name, first: reading, last: reading });
      }
    }
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      // The mean of a component: the highest mean of its containers (one replica's share of the load).
      for (const { component, first, last } of cpu.values()) {
        const ms = last[0] - first[0];
        if (ms < everyMs) continue;
        const milli = Math.round((last[1] - first[1]) / 1e3 / ms);
        usage[component].meanMilli = Math.max(usage[component].meanMilli, milli);
      }
      return usage;
    },
  };
}
