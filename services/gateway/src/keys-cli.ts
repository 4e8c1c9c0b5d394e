import path from 'node:path';
import { ConfigError } from '@vision/shared';
import { loadGatewayConfig, type GatewayConfig } from './config';
import { generateKey, isValidSubject } from './domain/key-format';
import { openKeyStore } from './index';
import { listLine, type KeysAnswer, type KeysRequest } from './keys-inbox';
import { InboxError, runningHolder, sendKeysRequest } from './keys-inbox-client';

const USAGE = `Usage: npm run keys -- <command>
  create --subject SUBJECT   create a key for SUBJECT; the key is printed once
  list                       list keys (id, subject, source, created, revoked)
  revoke KEY_ID              revoke a key

Uses the same database as the gateway: DATABASE_URL in distributed mode; in standalone mode the PGlite
directory under VISION_DATA_DIR, or, while a standalone service runs on that directory, that service
(through VISION_DATA_DIR/keys-inbox), which applies the change before this command reports it.`;

/** What the commands need of the key database, whoever holds it. */
interface KeyOps {
  create(subject: string): Promise<{ keyId: string; key: string }>;
  list(): Promise<string[]>;
  revoke(keyId: string): Promise<boolean>;
  close(): Promise<void>;
}

async function openDirect(cfg: GatewayConfig): Promise<KeyOps> {
  const { db, keys } = await openKeyStore(cfg);
  return {
    create: (subject) => keys.create(subject),
    list: async () => (await keys.list()).map(listLine),
    revoke: (keyId) => keys.revoke(keyId),
    close: () => db.close(),
  };
}

/** The running standalone gateway `pid` applies each command to its own database. */
function throughService(dataDir: string, pid: number): KeyOps {
  const send = async (req: KeysRequest): Promise<Extract<KeysAnswer, { ok: true }>> => {
    const answer = await sendKeysRequest(dataDir, pid, req);
    if (!answer.ok) throw new InboxError(`the running service refused the request: ${answer.error}`);
    return answer;
  };
  return {
    async create(subject) {
      const k = generateKey(); // only the id and the hash leave this process
      await send({ op: 'create', subject, keyId: k.keyId, hash: k.hash });
      return { keyId: k.keyId, key: k.key };
    },
    list: async () => (await send({ op: 'list' })).keys ?? [],
    revoke: async (keyId) => (await send({ op: 'revoke', keyId })).revoked === true,
    close: async () => undefined,
  };
}

async function openKeyOps(cfg: GatewayConfig): Promise<KeyOps> {
  if (cfg.VISION_MODE === 'standalone' && cfg.VISION_DATA_DIR !== ':memory:') {
    const dataDir = path.resolve(cfg.VISION_DATA_DIR);
    const pid = runningHolder(dataDir);
    if (pid !== undefined) return throughService(dataDir, pid);
  }
  return openDirect(cfg);
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '--help' || cmd === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return cmd ? 0 : 1;
  }
  if (!['create', 'list', 'revoke'].includes(cmd)) {
    process.stderr.write(`unknown command ${cmd}\n${USAGE}\n`);
    return 1;
  }
  const i = rest.indexOf('--subject');
  const subject = i >= 0 ? rest[i + 1] : undefined;
  if (cmd === 'create' && (!subject || !isValidSubject(subject))) {
    process.stderr.write('create needs --subject SUBJECT (letters, digits, . _ @ -; up to 128)\n');
    return 1;
  }
  if (cmd === 'revoke' && !rest[0]) {
    process.stderr.write('revoke needs KEY_ID\n');
    return 1;
  }
  const cfg = loadGatewayConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  const keys = await openKeyOps(cfg);
  try {
    if (cmd === 'create') {
      const k = await keys.create(subject!);
      process.stdout.write(
        `key_id:  ${k.keyId}\nsubject: ${subject}\nkey:     ${k.key}\n(shown once; only its hash is stored)\n`,
      );
    } else if (cmd === 'list') {
      for (const line of await keys.list()) process.stdout.write(`${line}\n`);
    } else {
      const id = rest[0];
      if (!(await keys.revoke(id))) {
        process.stderr.write(`no active key with id ${id}\n`);
        return 1;
      }
      process.stdout.write(`revoked ${id}\n`);
    }
    return 0;
  } finally {
    await keys.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(
      `${err instanceof ConfigError ? err.message : err instanceof Error ? err.message : String(err)}\n`,
    );
    process.exit(err instanceof ConfigError ? 2 : 1);
  },
);
