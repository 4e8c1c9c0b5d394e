#!/usr/bin/env node
'use strict';
/**
 * The table of docs/PERFORMANCE.md ("Where each bench stands"), made from the benches' own output. Every bench
 * prints one `target NAME: VALUE (limit LIMIT) MET|MISSED` line per target and ends with `targets: N met, M missed`
 * (bench/lib/targets.js); a recorded run is that output under a short header, in bench/results/<bench>.txt.
 *
 *   node scripts/docs/performance-table.js                        rewrite the table from bench/results/*.txt
 *   node scripts/docs/performance-table.js --check                exit 1 when the table is not what they give
 *   node scripts/docs/performance-table.js --run NAME [ARGS...]   run bench NAME (after `npm run build`), record its
 *                                                                 output in bench/results/NAME.txt, rewrite the table
 *
 * test/docs/performance-table.test.ts checks that the table is what this script makes of the recorded outputs.
 */
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const DOC = 'docs/PERFORMANCE.md';
const RESULTS = 'bench/results';
const BEGIN =
  '<!-- bench-table:begin (written by scripts/docs/performance-table.js; do not edit by hand) -->';
const END = '<!-- bench-table:end -->';

/** A bench run as `node bench/NAME.bench.js`. */
const nodeBench = (name, what) => ({ name, command: ['node', `bench/${name}.bench.js`], what });

/** Every bench with targets: its name (and recording's file name), how to run it, and what it compares. */
const BENCHES = [
  nodeBench('decode-flood', 'a live job beside a flood of huge image decodes'),
  nodeBench('images', 'image calls vs the raw pipeline'),
  nodeBench('cost', "a deployment's CPU per image vs the raw pipeline's, standalone"),
  {
    name: 'cost-distributed',
    command: ['bash', 'scripts/bench-distributed.sh', 'cost', '--distributed'],
    what: "a deployment's CPU per image vs the raw pipeline's, distributed",
  },
  {
    name: 'cost-floor',
    command: ['bash', 'scripts/bench-distributed.sh', 'cost-floor'],
    what: 'the least a distributed call must cost beside the model vs what the cost targets leave',
  },
  nodeBench('inference', '`/detect` and a file job vs the raw model'),
  nodeBench('live', 'live RTSP streams one instance keeps up with'),
  nodeBench('results', 'results ingest and reads through the gateway'),
  nodeBench('overload', 'four times capacity, offered open-loop'),
  nodeBench('overload-replay', 'sixteen heavy analytics replays beside another subject'),
  nodeBench('slow-attacks', 'slowhttptest beside a client'),
  nodeBench('startup', 'standalone start to ready'),
  nodeBench('memory', 'standalone resident memory, idle and after both models'),
  nodeBench('analytics', "zone and line rules vs the frame's detection"),
  nodeBench('evidence', "the pictures of events vs the frames' detection"),
  nodeBench('tracking', 'the tracker vs SORT, ByteTrack and OC-SORT on MOT15, and its cost vs detection'),
  nodeBench('kafka-clients', 'the bus on kafkajs vs on @platformatic/kafka, one broker'),
  nodeBench(
    'scheduling',
    "video jobs placed, taken over and moved by 50 replicas' ownership code on Postgres",
  ),
  {
    name: 'soak',
    command: ['bash', 'scripts/soak.sh'],
    what: 'mixed traffic with a Kafka restart (distributed)',
  },
];

const TARGET = /^target (.+): (\S+) \(limit (.+)\) (MET|MISSED)$/;
const CLOSING = /^targets: (\d+) met, (\d+) missed$/;

/**
 * Reads one recorded run: the header's fields (`# key: value` lines) and the targets. Throws when the output has no
 * closing line, or when its count does not match the target lines (a bench that printed a target another way).
 */
function parseRecording(text) {
  const header = {};
  const targets = [];
  let closing;
  let inHeader = true;
  for (const line of text.split('\n')) {
    const h = inHeader && /^# (\w+): (.*)$/.exec(line);
    if (h) {
      header[h[1]] = h[2].trim();
      continue;
    }
    inHeader = false;
    const t = TARGET.exec(line.trim());
    if (t) targets.push({ name: t[1], value: t[2], limit: t[3], met: t[4] === 'MET' });
    const c = CLOSING.exec(line.trim());
    if (c) closing = { met: Number(c[1]), missed: Number(c[2]) };
  }
  if (!closing) throw new Error('no closing `targets: N met, M missed` line');
  const met = targets.filter((t) => t.met).length;
  if (met !== closing.met || targets.length - met !== closing.missed)
    throw new Error(`the target lines (${met} met of ${targets.length}) disagree with the closing line`);
  return { header, targets };
}

/** The recorded runs found under bench/results, by bench name; benches without one are left out. */
function readRecordings(dir = path.join(root, RESULTS)) {
  const out = new Map();
  for (const b of BENCHES) {
    const file = path.join(dir, `${b.name}.txt`);
    if (fs.existsSync(file)) out.set(b.name, parseRecording(fs.readFileSync(file, 'utf8')));
  }
  return out;
}

const cell = (s) => String(s).replace(/\|/g, '\\|');

/** The Markdown table of every bench's targets, in BENCHES order; a bench not recorded gets one row saying so. */
function renderTable(recordings) {
  const lines = [
    '| bench | compares | target | figure | limit | met | recorded |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const b of BENCHES) {
    const r = recordings.get(b.name);
    if (!r) {
      lines.push(`| \`${b.name}\` | ${b.what} | — | not recorded | — | — | — |`);
      continue;
    }
    const when = `${r.header.recorded ?? '?'}: \`${r.header.command ?? b.command.join(' ')}\``;
    r.targets.forEach((t, i) =>
      lines.push(
        `| ${i === 0 ? `\`${b.name}\`` : ''} | ${i === 0 ? b.what : ''} | ${cell(t.name)} | ${cell(t.value)} | ` +
          `${cell(t.limit)} | ${t.met ? 'yes' : '**no**'} | ${i === 0 ? cell(when) : ''} |`,
      ),
    );
  }
  return lines.join('\n');
}

/** `doc` with the text between the markers replaced by `table`. */
function replaceTable(doc, table) {
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`${DOC} has no ${BEGIN} ... ${END} block`);
  return `${doc.slice(0, a + BEGIN.length)}\n${table}\n${doc.slice(b)}`;
}

/** Runs one bench, echoing its output, and records it under a header; the table is rewritten afterwards. */
async function runAndRecord(name, extra) {
  const bench = BENCHES.find((b) => b.name === name);
  if (!bench) throw new Error(`unknown bench ${name}: one of ${BENCHES.map((b) => b.name).join(', ')}`);
  const command = [...bench.command, ...extra];
  const git = (...a) => execFileSync('git', a, { cwd: root, encoding: 'utf8' }).trim();
  // Changed docs (this script rewrites the table after each run) do not change what a bench measures.
  const commit =
    git('rev-parse', '--short', 'HEAD') +
    (git('status', '--porcelain', '--untracked-files=no', '--', '.', ':!*.md') ? ' with local changes' : '');
  const loadAtStart = os.loadavg()[0].toFixed(1);
  const child = spawn(command[0], command.slice(1), { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => {
    process.stdout.write(d);
    out += d;
  });
  const code = await new Promise((resolve) => child.on('close', resolve));
  // The load average says how much else the machine ran meanwhile: the ratios hold up better than the times.
  const header = [
    `# bench: ${name}`,
    `# command: ${command.join(' ')}`,
    `# recorded: ${new Date().toISOString().slice(0, 10)}, commit ${commit}, Node ${process.version}, ` +
      `${os.cpus().length} CPUs, load average ${loadAtStart} at start and ${os.loadavg()[0].toFixed(1)} at the end`,
  ];
  const text = `${header.join('\n')}\n${out}`;
  parseRecording(text); // refuses an output without its targets (a bench that failed before the end)
  fs.mkdirSync(path.join(root, RESULTS), { recursive: true });
  fs.writeFileSync(path.join(root, RESULTS, `${name}.txt`), text);
  console.error(`recorded ${RESULTS}/${name}.txt (bench exit status ${code})`);
}

async function main(argv) {
  if (argv[0] === '--run') await runAndRecord(argv[1], argv.slice(2));
  const docPath = path.join(root, DOC);
  const doc = fs.readFileSync(docPath, 'utf8');
  const next = replaceTable(doc, renderTable(readRecordings()));
  if (argv[0] === '--check') {
    if (next !== doc) {
      console.error(
        `${DOC}: the bench table is not what bench/results/*.txt give; run ${path.relative(root, __filename)}`,
      );
      process.exitCode = 1;
    }
    return;
  }
  if (next !== doc) fs.writeFileSync(docPath, next);
}

if (require.main === module)
  main(process.argv.slice(2)).catch((err) => {
    console.error(err.message);
    process.exit(1);
  });

module.exports = { BENCHES, BEGIN, END, parseRecording, readRecordings, renderTable, replaceTable };
