/**
 * Reading the stack's Prometheus endpoints: the standalone process's one GET /metrics, or every service
 * process's in the distributed stack. Samples of the same series are summed over the processes.
 */
import type { DistributedStack } from './distributed';
import type { TestStack } from './stack';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The metrics endpoints of the stack. */
export function metricsUrls(stack: TestStack): string[] {
  if (stack.kind === 'distributed')
    return Object.values((stack as DistributedStack).deployment.procs)
      .flat()
      .map((p) => p.metricsUrl);
  return [stack.standalone!.metrics.url];
}

/** Parses the text format into samples. */
export function parseSamples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** Every sample of every endpoint of the stack now. */
export async function scrape(stack: TestStack): Promise<Sample[]> {
  const texts = await Promise.all(
    metricsUrls(stack).map(async (url) => {
      const res = await fetch(url);
      if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
      return res.text();
    }),
  );
  return texts.flatMap(parseSamples);
}

/** The samples named `name` whose labels include `labels`. */
export function matching(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
}

/** The sum of the samples named `name` whose labels include `labels` (0 when there is none). */
export function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return matching(samples, name, labels).reduce((a, s) => a + s.value, 0);
}
