/**
 * Docs, comments, strings and test names describe the product as it is. How the work went (the work sessions, the
 * rounds, the issue numbers) belongs in commit messages: a sentence such as "since the eighth session" or "(issue 14)"
 * tells a reader nothing they can check in the tree, and goes stale with the next change.
 *
 * The word "session" alone is not banned: the product has model sessions, browser sessions, RTSP sessions. Only the
 * shapes that name a unit of work are: an ordinal or a pointer word right before "session" ("eighth session", "this
 * session", "the previous session"), an issue number ("issue 14", "issue #38", "#38 issue", "issue-20"), the issue as
 * a work item ("this issue", "the targets") and a numbered or present work round ("round 3", "this round").
 * ALLOWED lists the product phrases that share those shapes.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot as root, repoTextFiles } from '../helpers/repo-files';

const ORDINALS =
  'first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|' +
  'sixteenth|seventeenth|eighteenth|nineteenth|twentieth|\\d+(?:st|nd|rd|th)';

/** Shapes that name a unit of work rather than the product. */
const HISTORY: Array<[string, RegExp]> = [
  ['an ordinal session', new RegExp(`\\b(?:${ORDINALS})[- ]sessions?\\b`, 'i')],
  ['a session pointed at', /\b(?:this|that|last|previous|earlier|next|later) sessions?\b/i],
  ['sessions before or since', /\bsessions? (?:before|since|ago)\b/i],
  ['a numbered issue', /\bissues?[- ]#?\d+/i],
  ['a numbered issue', /#\d+ issue\b/i],
  ['the issue as a work item', /\b(?:this|that|the) issue(?:'s|\b(?! with| of| is that| when| where))/i],
  [
    'a numbered round',
    /(?<!-)\brounds? \d+(?:\s*(?:[-–,]|and)\s*\d+)*\b(?! ?(?:ms|s|runs?|calls?|images?|frames?|%))/i,
  ],
  ['a present work round', /\b(?:this|that|the last|the previous) round\b(?! of)/i],
];

/**
 * Product phrases that match a shape above. Each entry: the file it is allowed in (relative path, or '*'), and a
 * pattern of the whole phrase. Keep it short: rewrite the sentence before adding to it.
 */
const ALLOWED: Array<[string, RegExp]> = [
  // A relay's or a poller's pass is a round; the last one runs at shutdown.
  ['*', /\bone last round\b/i],
];

/** A line without its comment marker and indentation, to be read as the continuation of the line before it. */
const continuation = (line: string | undefined): string =>
  (line ?? '').replace(/^\s*(?:\*|\/\/|#|--)?\s*/, '');

/**
 * The history mentions in one text, one per line at most: `file:line: "phrase" (shape)`. Each line is read with the
 * start of the next one, so that a phrase broken over two lines of a comment or a paragraph is found too.
 */
function historyMentions(file: string, text: string): string[] {
  const found: string[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const joined = `${line} ${continuation(lines[i + 1])}`;
    if (ALLOWED.some(([where, ok]) => (where === '*' || where === file) && ok.test(joined))) return;
    for (const [shape, re] of HISTORY) {
      const m = re.exec(joined);
      if (m && m.index < line.length) {
        found.push(`${file}:${i + 1}: "${m[0]}" (${shape})`);
        return;
      }
    }
  });
  return found;
}

describe('no doc, comment, string or test name tells the history of the work', () => {
  // This file spells the shapes out to test them.
  const self = path.relative(root, __filename);
  const files = repoTextFiles().filter((f) => f !== self);

  it('reads the docs, the sources, the tests, the scripts and the chart', () => {
    for (const f of ['README.md', 'docs/ARCHITECTURE.md', 'scripts/test-distributed.sh', 'jest.config.js'])
      expect(files).toContain(f);
    expect(files.some((f) => f.startsWith('services/') && f.endsWith('.ts'))).toBe(true);
    expect(files.some((f) => f.startsWith('charts/') && f.endsWith('.yaml'))).toBe(true);
    expect(files.some((f) => f.includes('node_modules') || f.includes('/dist/'))).toBe(false);
  });

  it('finds each shape it looks for', () => {
    const planted = [
      'since the eighth session a frame is lent',
      'docs/MODELS.md, thirteenth session',
      'the live tests (issue 14) trust',
      'see issue #38',
      'the #38 issue',
      'the issue-20 scenario',
      'this session measured',
      "the issue's targets",
      'after this round they take',
      'runs of round 3',
      'a frame is lent since the ninth\n * session of the work',
    ];
    for (const p of planted) expect([p, historyMentions('x.md', p).length]).toEqual([p, 1]);
  });

  it('lets the product speak of its sessions and rounds', () => {
    const product = [
      'each onnxruntime InferenceSession runs in a worker thread',
      'with one session each run is timed alone; two sessions run two frames',
      'the browser session (CDP) is closed after the test',
      'an RTSP session is set up with DESCRIBE and SETUP',
      "the key is kept in the tab's sessionStorage",
      'a database session holds the row lock',
      'One last round so that the events of the final requests are not left waiting',
      'a poll round goes on past a task whose write fails; that task is moved in a later round',
      'alternating direct and gateway rounds (--rounds 4)',
      'the issue with this parser is that it reads the whole body',
    ];
    for (const p of product) expect([p, historyMentions('x.md', p)]).toEqual([p, []]);
  });

  it('finds no such mention in the repository', () => {
    const found = files.flatMap((f) => historyMentions(f, readFileSync(path.join(root, f), 'utf8')));
    expect(found).toEqual([]);
  });
});
