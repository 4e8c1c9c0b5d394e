import { parseRules, RULE_LIMITS } from '@vision/shared';
import { SQUARE } from './analytics-fixtures';

const zone = (extra: Record<string, unknown> = {}) => ({ id: 'z1', polygon: SQUARE, ...extra });
const line = (extra: Record<string, unknown> = {}) => ({
  id: 'l1',
  start: [0.1, 0.5],
  end: [0.9, 0.5],
  ...extra,
});

function refusal(input: unknown): { reason: string; field?: string; message: string } {
  const r = parseRules(input);
  if (r.ok) throw new Error('expected a refusal');
  const details = r.error.details;
  return {
    reason: r.error.reason,
    message: r.error.message,
    field: 'field' in details ? details.field : undefined,
  };
}

describe('parseRules', () => {
  it('accepts zones and lines and fills in the defaults', () => {
    const r = parseRules({ zones: [zone()], lines: [line()] });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.rules.zones[0]).toMatchObject({
      anchor: 'bottom_center',
      min_score: 0,
      enter_ms: 0,
      exit_ms: 0,
      lost_grace_ms: 1000,
      switch_distance: 0.05,
    });
    expect(r.rules.lines[0]).toMatchObject({ anchor: 'bottom_center', hysteresis_ms: 0 });
  });

  it('refuses a self-intersecting polygon (a bow tie) and a spike folding back on its edge', () => {
    const bowTie = [
      [0.1, 0.1],
      [0.5, 0.5],
      [0.5, 0.1],
      [0.1, 0.5],
    ];
    expect(refusal({ zones: [zone({ polygon: bowTie })] })).toMatchObject({
      reason: 'invalid_field',
      field: 'zones.0.polygon',
    });
    const spike = [
      [0.1, 0.1],
      [0.5, 0.1],
      [0.3, 0.1],
      [0.3, 0.5],
    ];
    expect(refusal({ zones: [zone({ polygon: spike })] }).field).toBe('zones.0.polygon');
  });

  it('refuses fewer than 3 vertices, a repeated vertex, zero area and too many vertices', () => {
    expect(
      refusal({
        zones: [
          zone({
            polygon: [
              [0.1, 0.1],
              [0.2, 0.2],
            ],
          }),
        ],
      }).field,
    ).toBe('zones.0.polygon');
    const repeated = [
      [0.1, 0.1],
      [0.5, 0.1],
      [0.5, 0.1],
      [0.3, 0.5],
    ];
    expect(refusal({ zones: [zone({ polygon: repeated })] }).field).toBe('zones.0.polygon');
    const flat = [
      [0.1, 0.1],
      [0.5, 0.1],
      [0.9, 0.1000000001],
    ];
    expect(refusal({ zones: [zone({ polygon: flat })] }).message).toMatch(/area/);
    const many = Array.from({ length: RULE_LIMITS.maxVertices + 1 }, (_, i) => {
      const a = (2 * Math.PI * i) / (RULE_LIMITS.maxVertices + 1);
      return [0.5 + 0.4 * Math.cos(a), 0.5 + 0.4 * Math.sin(a)];
    });
    expect(refusal({ zones: [zone({ polygon: many })] }).field).toBe('zones.0.polygon');
  });

  it('refuses a degenerate line, points outside [0, 1] and non-finite numbers', () => {
    expect(refusal({ lines: [line({ end: [0.1, 0.5] })] }).field).toBe('lines.0.end');
    expect(refusal({ lines: [line({ end: [0.1005, 0.5] })] }).message).toMatch(/at least/);
    expect(refusal({ lines: [line({ start: [1.01, 0.5] })] }).field).toBe('lines.0.start.0');
    expect(
      refusal({
        zones: [
          zone({
            polygon: [
              [0, 0],
              [1, 0],
              [0.5, -0.1],
            ],
          }),
        ],
      }).field,
    ).toBe('zones.0.polygon.2.1');
    expect(refusal({ lines: [line({ start: [Number.NaN, 0.5] })] }).field).toBe('lines.0.start.0');
    expect(refusal({ zones: [zone({ min_score: Number.POSITIVE_INFINITY })] }).field).toBe(
      'zones.0.min_score',
    );
  });

  it('refuses duplicate ids (across zones and lines), bad ids and too many rules', () => {
    expect(refusal({ zones: [zone({ id: 'same' })], lines: [line({ id: 'same' })] })).toMatchObject({
      reason: 'invalid_field',
      field: 'lines.0.id',
    });
    expect(refusal({ zones: [zone({ id: 'has space' })] }).field).toBe('zones.0.id');
    expect(refusal({ zones: [zone({ id: '_hidden' })] }).field).toBe('zones.0.id');
    expect(refusal({ zones: [zone({ id: 'x'.repeat(65) })] }).field).toBe('zones.0.id');
    const zones = Array.from({ length: 11 }, (_, i) => zone({ id: `z${i}` }));
    const lines = Array.from({ length: 10 }, (_, i) => line({ id: `l${i}` }));
    expect(parseRules({ zones: zones.slice(0, 10), lines }).ok).toBe(true);
    expect(refusal({ zones, lines }).message).toMatch(/at most 20/);
  });

  it('refuses names and labels with a control character or a lone surrogate (not storable as text)', () => {
    expect(refusal({ zones: [zone({ name: 'a\u0000b' })] }).field).toBe('zones.0.name');
    expect(refusal({ zones: [zone({ labels: ['car', 'tab\there'] })] }).field).toBe('zones.0.labels.1');
    expect(refusal({ lines: [line({ labels: ['\ud800'] })] }).field).toBe('lines.0.labels.0');
    expect(refusal({ lines: [line({ name: 'x\udc00' })] }).field).toBe('lines.0.name');
    expect(refusal({ zones: [zone({ occupancy: [{ label: 'del\u007f', over: 2 }] })] }).field).toBe(
      'zones.0.occupancy.0.label',
    );
    expect(parseRules({ zones: [zone({ name: 'Entrée 🚗 门', labels: ['person'] })] }).ok).toBe(true);
  });

  it('names an unknown field with reason unknown_field', () => {
    const r = parseRules({ zones: [zone({ colour: 'red' })] });
    expect(r).toEqual({
      ok: false,
      error: {
        reason: 'unknown_field',
        message: 'Unknown field(s): zones.0.colour',
        details: { fields: ['zones.0.colour'] },
      },
    });
  });

  it('refuses occupancy thresholds that cannot clear, duplicate labels, and occupancy on a coverage zone', () => {
    expect(refusal({ zones: [zone({ occupancy: [{ label: 'person', over: 2, under: 4 }] })] }).field).toBe(
      'zones.0.occupancy.0.under',
    );
    const twice = [
      { label: 'person', over: 2 },
      { label: 'person', over: 3 },
    ];
    expect(refusal({ zones: [zone({ occupancy: twice })] }).field).toBe('zones.0.occupancy.1.label');
    expect(refusal({ zones: [zone({ coverage: 0.3, occupancy: [{ label: 'fire', over: 1 }] })] }).field).toBe(
      'zones.0.occupancy',
    );
    expect(refusal({ zones: [zone({ coverage: 0 })] }).field).toBe('zones.0.coverage');
  });
});
