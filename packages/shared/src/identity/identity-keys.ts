import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  X509Certificate,
} from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../config/config';
import {
  callersOf,
  IDENTITY_CALLS,
  IDENTITY_ISSUERS,
  type IdentitySigner,
  type IdentityVerifier,
} from './identity';

/**
 * Identity keys on disk (VISION_IDENTITY_DIR): `<issuer>.key`, the issuer's Ed25519 private key
 * (PKCS#8 PEM), and `<issuer>.pub`, its public key (SPKI PEM, or a certificate holding it, as the
 * Helm chart writes). A service reads the private key of its own name, only when it calls others,
 * and the public keys of the issuers that call it. Nothing else in the directory is read, so a pod may
 * mount exactly its own key and its callers' public keys.
 */
export interface ServiceIdentity {
  /** Set for services that call others (IDENTITY_CALLS); the inference service has none. */
  signer?: IdentitySigner;
  verifier: IdentityVerifier;
}

const VAR = 'VISION_IDENTITY_DIR';

function readKeyFile(dir: string, file: string, what: string): string {
  const full = path.join(dir, file);
  try {
    return readFileSync(full, 'utf8');
  } catch {
    throw new ConfigError([
      `${VAR}: ${file} (${what}) is missing or unreadable in the identity directory (docs/SECURITY.md)`,
    ]);
  }
}

/** A public key from SPKI PEM or from a certificate's PEM. */
export function parsePublicKey(pem: string): KeyObject {
  return pem.includes('BEGIN CERTIFICATE') ? new X509Certificate(pem).publicKey : createPublicKey(pem);
}

function ed25519(key: KeyObject, file: string): KeyObject {
  if (key.asymmetricKeyType !== 'ed25519')
    throw new ConfigError([`${VAR}: ${file} is not an Ed25519 key (${key.asymmetricKeyType ?? 'unknown'})`]);
  return key;
}

/**
 * Loads what `service` needs from `dir`: its own private key if it calls others, and the public keys of
 * its callers that are there. A caller whose public key is absent is refused (a pod of a split
 * deployment mounts only the callers it serves); a service that has callers needs at least one.
 */
export function loadServiceIdentity(dir: string | undefined, service: string): ServiceIdentity {
  if (!dir) throw new ConfigError([`${VAR}: required (the directory of this service's identity keys)`]);
  const keys = new Map<string, KeyObject>();
  const callers = callersOf(service);
  const present = callers.filter((issuer) => existsSync(path.join(dir, `${issuer}.pub`)));
  if (callers.length > 0 && present.length === 0)
    throw new ConfigError([
      `${VAR}: no public key of a caller of ${service} (${callers.map((c) => `${c}.pub`).join(', ')}) in the identity directory (docs/SECURITY.md)`,
    ]);
  for (const issuer of present) {
    const file = `${issuer}.pub`;
    let key: KeyObject;
    try {
      key = parsePublicKey(readKeyFile(dir, file, `the public key of ${issuer}, which calls ${service}`));
    } catch (err) {
      if (err instanceof ConfigError) throw err;
      throw new ConfigError([`${VAR}: ${file} is not a PEM public key or certificate`]);
    }
    keys.set(issuer, ed25519(key, file));
  }
  if (!Object.hasOwn(IDENTITY_CALLS, service)) return { verifier: { keys } };
  const file = `${service}.key`;
  let key: KeyObject;
  try {
    key = createPrivateKey(readKeyFile(dir, file, `the private key of ${service}`));
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError([`${VAR}: ${file} is not a PEM private key`]);
  }
  return { signer: { issuer: service, key: ed25519(key, file) }, verifier: { keys } };
}

/** A fresh Ed25519 key pair per issuer, as PEM text. */
export function generateIdentityKeys(): Record<string, { key: string; pub: string }> {
  const out: Record<string, { key: string; pub: string }> = {};
  for (const issuer of IDENTITY_ISSUERS) {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    out[issuer] = {
      key: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      pub: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    };
  }
  return out;
}

/**
 * Writes a key pair per issuer into `dir` (private keys readable by the owner only), keeping the pairs
 * already there: a second run changes nothing. Returns the files written.
 */
export function writeIdentityKeys(dir: string): string[] {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const written: string[] = [];
  const fresh = generateIdentityKeys();
  for (const issuer of IDENTITY_ISSUERS) {
    const keyFile = path.join(dir, `${issuer}.key`);
    const pubFile = path.join(dir, `${issuer}.pub`);
    if (existsSync(keyFile) && existsSync(pubFile)) continue;
    writeFileSync(keyFile, fresh[issuer].key, { mode: 0o600 });
    chmodSync(keyFile, 0o600);
    writeFileSync(pubFile, fresh[issuer].pub, { mode: 0o644 });
    written.push(keyFile, pubFile);
  }
  return written;
}

/** A secret derived from a signer's private key (one value for every replica holding that key). */
export function deriveSecret(signer: IdentitySigner, purpose: string): string {
  const der = signer.key.export({ format: 'der', type: 'pkcs8' });
  return createHash('sha256').update(`vision:${purpose}:`).update(der).digest('base64url');
}

/** The services that check tasks' job grants on bus messages (job-grant.ts): they hold `tasks.pub`. */
export const JOB_GRANT_READERS: readonly string[] = ['results'];

/** Tasks' public key from the identity directory, which job grants are checked with (job-grant.ts). */
export function loadJobGrantKey(dir: string | undefined): KeyObject {
  if (!dir) throw new ConfigError([`${VAR}: required (the directory of this service's identity keys)`]);
  const file = 'tasks.pub';
  const pem = readKeyFile(dir, file, 'the public key of tasks, which signs job grants');
  let key: KeyObject;
  try {
    key = parsePublicKey(pem);
  } catch {
    throw new ConfigError([`${VAR}: ${file} is not a PEM public key or certificate`]);
  }
  return ed25519(key, file);
}

/** The identity of a service that calls others: its signer is always there. */
export type CallingIdentity = ServiceIdentity & { signer: IdentitySigner };

/** loadServiceIdentity for a service in IDENTITY_CALLS (gateway, tasks, images, results). */
export function loadCallingIdentity(dir: string | undefined, service: string): CallingIdentity {
  const identity = loadServiceIdentity(dir, service);
  if (!identity.signer) throw new Error(`${service} calls no other service: it has no identity key`);
  return { ...identity, signer: identity.signer };
}

/** Every service of a deployment, issuers or not. */
export const IDENTITY_SERVICES = ['gateway', 'tasks', 'quota', 'results', 'images', 'inference'] as const;

/**
 * One directory per service under `root` (`root/<service>`), each holding exactly what that service
 * reads: its own private key when it calls others, and its callers' public keys. Mount each into its
 * own process only (the chart and the distributed launcher do). Kept when complete; otherwise made
 * afresh for all. Returns the directory of each service.
 */
export function writeServiceIdentityDirs(root: string): Record<string, string> {
  const dirs = Object.fromEntries(IDENTITY_SERVICES.map((s) => [s, path.join(root, s)]));
  const needs = (service: string) => [
    ...(Object.hasOwn(IDENTITY_CALLS, service) ? [`${service}.key`] : []),
    ...callersOf(service).map((issuer) => `${issuer}.pub`),
    ...(JOB_GRANT_READERS.includes(service) && !callersOf(service).includes('tasks') ? ['tasks.pub'] : []),
  ];
  if (IDENTITY_SERVICES.every((s) => needs(s).every((f) => existsSync(path.join(dirs[s], f))))) return dirs;
  const keys = generateIdentityKeys();
  for (const service of IDENTITY_SERVICES) {
    mkdirSync(dirs[service], { recursive: true, mode: 0o700 });
    for (const file of needs(service)) {
      const [issuer, kind] = file.split('.') as [string, 'key' | 'pub'];
      writeFileSync(path.join(dirs[service], file), keys[issuer][kind], {
        mode: kind === 'key' ? 0o600 : 0o644,
      });
    }
  }
  return dirs;
}
