import { Command, Option } from 'commander';
import type {
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookEventType,
} from '@vision/sdk';
import { clientFor, json, numberIn, out } from '../context';
import { UsageError } from '../exit-codes';

/** Every event type an endpoint may subscribe to (docs/WEBHOOKS.md, "Events"). */
export const WEBHOOK_EVENT_TYPES = [
  'vision.task.status_changed',
  'vision.task.frames_available',
  'vision.image_detection.completed',
  'vision.quota.exhausted',
  'vision.zone.entered',
  'vision.zone.exited',
  'vision.zone.dwell_exceeded',
  'vision.zone.occupancy_exceeded',
  'vision.zone.occupancy_cleared',
  'vision.line.crossed',
] as const satisfies readonly WebhookEventType[];
// Fails to compile when docs/openapi.yaml gains an event type that the list above lacks.
const everyTypeListed: Exclude<WebhookEventType, (typeof WEBHOOK_EVENT_TYPES)[number]> extends never
  ? true
  : never = true;
void everyTypeListed;

const DELIVERY_STATUSES = ['pending', 'delivered', 'dead'] as const;
const SECRET_NOTE = 'the secret is shown only now: store it (`vision webhooks rotate` issues a new one)\n';

/** An id argument as the API takes it: 1 to `max` visible characters, no slash. */
function idArg(name: string, value: string, max: number): string {
  if (value.length === 0 || value.length > max || /[\s/\\\p{Cc}]/u.test(value))
    throw new UsageError(`${name} must be 1 to ${max} characters without spaces or slashes: ${value}`);
  return value;
}
const endpointArg = (v: string) => idArg('endpoint_id', v, 64);
const deliveryArg = (v: string) => idArg('delivery_id', v, 128);

/** The receiver's address: an absolute http(s) URL of at most 2048 characters, without credentials or fragment. */
function receiverUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--url is not a URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--url must be http or https: ${value}`);
  if (!url.hostname) throw new UsageError(`--url has no host: ${value}`);
  if (url.username || url.password) throw new UsageError('--url must not carry a user or password');
  if (url.hash) throw new UsageError('--url must not carry a fragment');
  if (value.length > 2048) throw new UsageError('--url must be at most 2048 characters');
  return value;
}

const endpointLine = (e: WebhookEndpoint) =>
  `${e.endpoint_id}  ${e.status.padEnd(8)} ${e.url}  ${e.event_types.join(',')}` +
  (e.disabled_reason ? `  (${e.disabled_reason})` : '');

function printEndpoint(e: WebhookEndpoint | WebhookEndpointWithSecret, asJson?: boolean) {
  if (asJson) return out(json(e));
  const rows: [string, string | undefined][] = [
    ['endpoint_id', e.endpoint_id],
    ['url', e.url],
    ['event_types', e.event_types.join(', ')],
    ['status', e.status + (e.disabled_reason ? ` (${e.disabled_reason})` : '')],
    ['description', e.description],
    ['created_at', e.created_at],
    ['updated_at', e.updated_at],
    ['previous_secret_expires_at', e.previous_secret_expires_at],
    ['secret', 'secret' in e ? e.secret : undefined],
  ];
  return out(
    rows
      .filter((r): r is [string, string] => r[1] !== undefined && r[1] !== '')
      .map(([k, v]) => `${k.padEnd(27)}${v}`)
      .join('\n'),
  );
}

const deliveryLine = (d: WebhookDelivery) =>
  [
    d.delivery_id,
    d.status.padEnd(9),
    d.event_type.padEnd(32),
    `attempts ${d.attempts}`,
    d.last_outcome ? `last ${d.last_outcome}${d.last_status_code ? ` ${d.last_status_code}` : ''}` : '',
    d.created_at,
    d.next_attempt_at ? `next ${d.next_attempt_at}` : '',
  ]
    .filter((c) => c !== '')
    .join('  ');

function printDelivery(d: WebhookDelivery, asJson?: boolean) {
  if (asJson) return out(json(d));
  const rows: [string, string | number | undefined][] = [
    ['delivery_id', d.delivery_id],
    ['event_type', d.event_type],
    ['status', d.status],
    ['attempts', d.attempts],
    ['created_at', d.created_at],
    ['next_attempt_at', d.next_attempt_at],
    ['delivered_at', d.delivered_at],
    ['dead_at', d.dead_at],
  ];
  const lines = rows.filter((r) => r[1] !== undefined).map(([k, v]) => `${k.padEnd(16)}${v}`);
  for (const a of d.attempt_log)
    lines.push(
      `attempt ${a.attempt}  ${a.started_at}  ${a.outcome}` +
        `${a.status_code !== undefined ? ` ${a.status_code}` : ''}  ${a.latency_ms} ms`,
    );
  return out(lines.join('\n'));
}

function createCommand(): Command {
  return new Command('create')
    .description('register an endpoint; the service first sends it a signed verification event')
    .requiredOption('--url <url>', 'the receiver (http or https; it must answer 2xx to the verification)')
    .addOption(
      new Option('--event <type...>', 'event types to receive (repeat or list several)')
        .choices(WEBHOOK_EVENT_TYPES)
        .makeOptionMandatory(),
    )
    .option('--description <text>', 'a note for people (at most 200 characters)')
    .option('--json', 'print the endpoint as JSON')
    .action(
      async (
        opts: { url: string; event: WebhookEventType[]; description?: string; json?: boolean },
        cmd: Command,
      ) => {
        const url = receiverUrl(opts.url);
        if (opts.description !== undefined && opts.description.length > 200)
          throw new UsageError('--description must be at most 200 characters');
        const client = clientFor(cmd);
        const created = await client.webhooks.create({
          url,
          event_types: [...new Set(opts.event)],
          ...(opts.description !== undefined ? { description: opts.description } : {}),
        });
        process.stderr.write(SECRET_NOTE);
        await printEndpoint(created, opts.json);
      },
    );
}

function deliveriesCommand(): Command {
  return new Command('deliveries')
    .description(
      "an endpoint's delivery log, newest first; with a delivery_id, that delivery and its attempts",
    )
    .argument('<endpoint_id>', 'the endpoint', endpointArg)
    .argument('[delivery_id]', 'one delivery (its webhook-id)', deliveryArg)
    .addOption(new Option('--status <status>', 'only deliveries in this status').choices(DELIVERY_STATUSES))
    .option('--limit <n>', 'at most this many deliveries', numberIn('--limit', 1, 1_000_000, true))
    .option('--page-size <n>', 'deliveries per request', numberIn('--page-size', 1, 100, true), 100)
    .option('--json', 'print JSON (one delivery per line for the log)')
    .action(
      async (
        endpointId: string,
        deliveryId: string | undefined,
        opts: {
          status?: (typeof DELIVERY_STATUSES)[number];
          limit?: number;
          pageSize: number;
          json?: boolean;
        },
        cmd: Command,
      ) => {
        if (deliveryId !== undefined && (opts.status !== undefined || opts.limit !== undefined))
          throw new UsageError('--status and --limit list the log: leave them out with a delivery_id');
        const client = clientFor(cmd);
        if (deliveryId !== undefined)
          return printDelivery(await client.webhooks.delivery(endpointId, deliveryId), opts.json);
        let n = 0;
        let cursor = '';
        do {
          const want = opts.limit === undefined ? opts.pageSize : Math.min(opts.pageSize, opts.limit - n);
          const page = await client.webhooks.deliveries(endpointId, {
            limit: want,
            ...(opts.status ? { status: opts.status } : {}),
            ...(cursor ? { cursor } : {}),
          });
          for (const d of page.items) {
            await out(opts.json ? JSON.stringify(d) : deliveryLine(d));
            if (opts.limit !== undefined && ++n >= opts.limit) return;
          }
          cursor = page.next_cursor;
        } while (cursor);
      },
    );
}

export function webhooksCommand(): Command {
  const hooks = new Command('webhooks').description(
    "webhook endpoints of this key's subject and their delivery logs (docs/WEBHOOKS.md)",
  );
  hooks.addCommand(createCommand());
  hooks.addCommand(
    new Command('list')
      .description('list the endpoints, oldest first (secrets are never shown again)')
      .option('--json', 'print the endpoints as a JSON array')
      .action(async (opts: { json?: boolean }, cmd: Command) => {
        const endpoints = await clientFor(cmd).webhooks.list();
        if (opts.json) return out(json(endpoints));
        for (const e of endpoints) await out(endpointLine(e));
      }),
  );
  hooks.addCommand(
    new Command('get')
      .description('show an endpoint')
      .argument('<endpoint_id>', 'the endpoint', endpointArg)
      .option('--json', 'print the endpoint as JSON')
      .action(async (id: string, opts: { json?: boolean }, cmd: Command) =>
        printEndpoint(await clientFor(cmd).webhooks.get(id), opts.json),
      ),
  );
  hooks.addCommand(
    new Command('rotate')
      .description('issue a new signing secret; the old one keeps signing beside it for a while')
      .argument('<endpoint_id>', 'the endpoint', endpointArg)
      .option('--json', 'print the endpoint and its new secret as JSON')
      .action(async (id: string, opts: { json?: boolean }, cmd: Command) => {
        const rotated = await clientFor(cmd).webhooks.rotateSecret(id);
        process.stderr.write(SECRET_NOTE);
        await printEndpoint(rotated, opts.json);
      }),
  );
  hooks.addCommand(
    new Command('delete')
      .description('delete an endpoint with its deliveries and log')
      .argument('<endpoint_id>', 'the endpoint', endpointArg)
      .action(async (id: string, _opts: unknown, cmd: Command) => {
        await clientFor(cmd).webhooks.delete(id);
        process.stderr.write(`deleted ${id}\n`);
      }),
  );
  hooks.addCommand(deliveriesCommand());
  hooks.addCommand(
    new Command('redeliver')
      .description('send a dead delivery again (same webhook-id); prints it, pending')
      .argument('<endpoint_id>', 'the endpoint', endpointArg)
      .argument('<delivery_id>', 'the dead delivery (its webhook-id)', deliveryArg)
      .option('--json', 'print the delivery as JSON')
      .action(async (id: string, deliveryId: string, opts: { json?: boolean }, cmd: Command) =>
        printDelivery(await clientFor(cmd).webhooks.redeliver(id, deliveryId), opts.json),
      ),
  );
  return hooks;
}
