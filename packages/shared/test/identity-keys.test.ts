import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  ConfigError,
  loadServiceIdentity,
  signIdentity,
  verifyIdentity,
  writeIdentityKeys,
  writeServiceIdentityDirs,
} from '../src';

describe('identity keys on disk', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'vision-identity-keys-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('gives each service exactly its own private key (if it calls others) and its callers public keys', () => {
    const dirs = writeServiceIdentityDirs(root);
    const files = Object.fromEntries(Object.entries(dirs).map(([s, d]) => [s, readdirSync(d).sort()]));
    expect(files).toEqual({
      gateway: ['gateway.key'],
      tasks: ['gateway.pub', 'results.pub', 'tasks.key'],
      quota: ['gateway.pub', 'images.pub', 'tasks.pub'],
      // results also verifies the job grants tasks signs (job-grant.ts) with tasks' public key.
      results: ['gateway.pub', 'results.key', 'tasks.pub'],
      images: ['gateway.pub', 'images.key', 'tasks.pub'],
      // results asks inference for the pictures of events (evidence).
      inference: ['images.pub', 'results.pub', 'tasks.pub'],
    });
    expect(statSync(path.join(dirs.tasks, 'tasks.key')).mode & 0o077).toBe(0);
    // Keys made for one service verify at the services it calls.
    const tasks = loadServiceIdentity(dirs.tasks, 'tasks');
    const inference = loadServiceIdentity(dirs.inference, 'inference');
    expect(inference.signer).toBeUndefined();
    const call = { method: 'GET', target: '/internal/v1/scenes' };
    const header = signIdentity(tasks.signer!, { subject: 's', requestId: 'r' }, 'inference', call);
    expect(verifyIdentity(inference.verifier, header, 'inference', call)).toEqual({
      subject: 's',
      requestId: 'r',
      issuer: 'tasks',
      audience: 'inference',
    });
    // A second run keeps them.
    const before = loadServiceIdentity(dirs.quota, 'quota')
      .verifier.keys.get('tasks')!
      .export({ format: 'pem', type: 'spki' });
    writeServiceIdentityDirs(root);
    expect(
      loadServiceIdentity(dirs.quota, 'quota')
        .verifier.keys.get('tasks')!
        .export({ format: 'pem', type: 'spki' }),
    ).toBe(before);
  });

  it('never loads a private key for inference, even from a directory holding them all', () => {
    writeIdentityKeys(root);
    const inference = loadServiceIdentity(root, 'inference');
    expect(inference.signer).toBeUndefined();
    expect([...inference.verifier.keys.keys()].sort()).toEqual(['images', 'results', 'tasks']);
  });

  it('refuses to start without the directory, or without any caller key, naming VISION_IDENTITY_DIR', () => {
    expect(() => loadServiceIdentity(undefined, 'quota')).toThrow(ConfigError);
    expect(() => loadServiceIdentity(undefined, 'quota')).toThrow(/VISION_IDENTITY_DIR/);
    expect(() => loadServiceIdentity(root, 'quota')).toThrow(/no public key of a caller of quota/);
    expect(() => loadServiceIdentity(root, 'gateway')).toThrow(/gateway\.key/);
    writeFileSync(path.join(root, 'gateway.pub'), 'not a key');
    expect(() => loadServiceIdentity(root, 'quota')).toThrow(/gateway\.pub is not a PEM public key/);
  });
});
