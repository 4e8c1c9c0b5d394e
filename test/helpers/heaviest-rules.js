'use strict';
/**
 * The costliest rule set the validator accepts: RULE_LIMITS.maxRules coverage zones (the zones whose step costs
 * most), each a polygon of RULE_LIMITS.maxVertices vertices watching every label, with long names, and labels
 * added until one more would pass RULE_LIMITS.maxBytes. `watch` is the labels each zone lists first (absent:
 * every label is watched). Plain JavaScript, so that the tests (through places.ts) and the benches share it.
 */
const { parseRules, RULE_LIMITS } = require('@vision/shared');

function heaviestRules(watch = []) {
  const circle = (k) =>
    Array.from({ length: RULE_LIMITS.maxVertices }, (_, i) => {
      const a = (2 * Math.PI * i) / RULE_LIMITS.maxVertices;
      const r = 0.2 + 0.01 * k;
      return [0.5 + r * Math.cos(a), 0.5 + r * Math.sin(a)];
    });
  const zones = Array.from({ length: RULE_LIMITS.maxRules }, (_, k) => ({
    id: `cover-${k}`,
    name: `${k}`.padEnd(200, 'n'),
    coverage: 0.2,
    polygon: circle(k),
    ...(watch.length > 0 ? { labels: [...watch] } : {}),
  }));
  const size = (set) => {
    const parsed = parseRules(set);
    if (!parsed.ok) throw new Error(parsed.error.message);
    return Buffer.byteLength(JSON.stringify(parsed.rules));
  };
  if (watch.length === 0) return { zones };
  // Pad with labels no detector gives, zone by zone, while the set stays within the limit (a label adds its
  // JSON and a comma).
  let bytes = size({ zones });
  for (let n = 0; n < RULE_LIMITS.maxRules * (RULE_LIMITS.maxLabels - watch.length); n++) {
    const label = `pad-${n}-`.padEnd(200, 'l');
    const more = Buffer.byteLength(JSON.stringify(label)) + 1;
    if (bytes + more > RULE_LIMITS.maxBytes) break;
    zones[n % zones.length].labels.push(label);
    bytes += more;
  }
  if (size({ zones }) !== bytes) throw new Error('heaviestRules: size estimate off');
  return { zones };
}

module.exports = { heaviestRules };
