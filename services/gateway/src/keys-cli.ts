import { ConfigError } from '@vision/shared';
import { loadGatewayConfig } from './config';
import { isValidSubject } from './domain/key-format';
import { openKeyStore } from './index';

const USAGE = `Usage: npm run keys -- <command>
  create --subject SUBJECT   create a key for SUBJECT; the key is printed once
  list                       list keys (id, subject, source, created, revoked)
  revoke KEY_ID              revoke a key

Uses the same database as the gateway (DATABASE_URL in distributed mode, the PGlite directory under
VISION_DATA_DIR in standalone mode: stop the standalone service first, PGlite allows one process).`;

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '--help' || cmd === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return cmd ? 0 : 1;
  }
  const cfg = loadGatewayConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  const { db, keys } = await openKeyStore(cfg);
  try {
    switch (cmd) {
      case 'create': {
        const i = rest.indexOf('--subject');
        const subject = i >= 0 ? rest[i + 1] : undefined;
        if (!subject || !isValidSubject(subject)) {
          process.stderr.write('create needs --subject SUBJECT (letters, digits, . _ @ -; up to 128)\n');
          return 1;
        }
        const k = await keys.create(subject);
        process.stdout.write(
          `key_id:  ${k.keyId}\nsubject: ${subject}\nkey:     ${k.key}\n(shown once; only its hash is stored)\n`,
        );
        return 0;
      }
      case 'list': {
        for (const k of await keys.list())
          process.stdout.write(
            `${k.keyId}\t${k.subject}\t${k.source}\t${k.createdAt.toISOString()}\t${k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : 'active'}\n`,
          );
        return 0;
      }
      case 'revoke': {
        const id = rest[0];
        if (!id) {
          process.stderr.write('revoke needs KEY_ID\n');
          return 1;
        }
        if (!(await keys.revoke(id))) {
          process.stderr.write(`no active key with id ${id}\n`);
          return 1;
        }
        process.stdout.write(`revoked ${id}\n`);
        return 0;
      }
      default:
        process.stderr.write(`unknown command ${cmd}\n${USAGE}\n`);
        return 1;
    }
  } finally {
    await db.close();
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
