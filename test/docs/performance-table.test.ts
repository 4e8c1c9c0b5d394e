/**
 * The table of docs/PERFORMANCE.md ("Where each bench stands") is what scripts/docs/performance-table.js makes of
 * the recorded bench outputs (bench/results/*.txt): no figure in it is typed by hand, and none goes stale while a
 * newer recording sits beside it. Every bench that reports targets has its place in the table.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface Target {
  name: string;
  value: string;
  limit: string;
  met: boolean;
}
interface Recording {
  header: Record<string, string>;
  targets: Target[];
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const table = require('../../scripts/docs/performance-table') as {
  BENCHES: { name: string; command: string[] }[];
  BEGIN: string;
  END: string;
  parseRecording(text: string): Recording;
  readRecordings(): Map<string, Recording>;
  renderTable(recordings: Map<string, Recording>): string;
  replaceTable(doc: string, table: string): string;
};

const root = path.resolve(__dirname, '../..');
const doc = readFileSync(path.join(root, 'docs/PERFORMANCE.md'), 'utf8');

describe('docs/PERFORMANCE.md bench table', () => {
  it('is what scripts/docs/performance-table.js makes of bench/results/*.txt', () => {
    const expected = table.replaceTable(doc, table.renderTable(table.readRecordings()));
    const block = (text: string): string => text.slice(text.indexOf(table.BEGIN), text.indexOf(table.END));
    expect(block(doc)).toBe(block(expected));
    expect(doc).toBe(expected);
  });

  it('has a place for every bench that reports targets', () => {
    const benches = readdirSync(path.join(root, 'bench'))
      .filter((f) => f.endsWith('.js'))
      .filter(
        (f) =>
          readFileSync(path.join(root, 'bench', f), 'utf8').includes("require('./lib/targets')") ||
          /limits\.report\(/.test(readFileSync(path.join(root, 'bench', f), 'utf8')),
      )
      .map((f) => f.replace(/(\.bench)?\.js$/, ''));
    expect(benches.length).toBeGreaterThan(5);
    // A bench run in both modes has a second place, `<bench>-distributed`.
    const places = new Set(table.BENCHES.map((b) => b.name.replace(/-distributed$/, '')));
    expect([...places].sort()).toEqual(benches.sort());
  });

  it('names a recording of each bench by its command and date', () => {
    for (const [name, r] of table.readRecordings()) {
      expect([name, r.header.bench]).toEqual([name, name]);
      expect(r.header.command).toMatch(/^(node bench\/|bash scripts\/)/);
      expect(r.header.recorded).toMatch(/^\d{4}-\d\d-\d\d, commit /);
      expect(r.targets.length).toBeGreaterThan(0);
    }
  });

  it('reads the target lines and refuses an output whose closing count disagrees with them', () => {
    const out = [
      '# bench: x',
      '# command: node bench/x.bench.js',
      'some figure: 12 ms',
      'target a / b: 1.20 (limit <= 1.25) MET',
      'target c / d: 0.70 (limit >= 0.9) MISSED',
    ];
    const r = table.parseRecording([...out, 'targets: 1 met, 1 missed'].join('\n'));
    expect(r.header).toEqual({ bench: 'x', command: 'node bench/x.bench.js' });
    expect(r.targets).toEqual([
      { name: 'a / b', value: '1.20', limit: '<= 1.25', met: true },
      { name: 'c / d', value: '0.70', limit: '>= 0.9', met: false },
    ]);
    expect(() => table.parseRecording([...out, 'targets: 2 met, 0 missed'].join('\n'))).toThrow(/disagree/);
    expect(() => table.parseRecording(out.join('\n'))).toThrow(/closing/);
  });
});
