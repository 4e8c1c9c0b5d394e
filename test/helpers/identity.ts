/**
 * Identity keys for tests: one directory per test file with a key pair for every issuer (what
 * standalone makes under its data dir), and the signer or verifier a service would load from it.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  callersOf,
  IDENTITY_SERVICES,
  loadCallingIdentity,
  signIdentity,
  type Identity,
  loadServiceIdentity,
  writeIdentityKeys,
  type IdentitySigner,
  type IdentityVerifier,
} from '@vision/shared';

let dir: string | undefined;

/** The directory to give services as VISION_IDENTITY_DIR. */
export function identityDir(): string {
  if (!dir) {
    dir = mkdtempSync(path.join(os.tmpdir(), 'vision-identity-'));
    writeIdentityKeys(dir);
  }
  return dir;
}

/** The key `issuer` (gateway, tasks, images, results) signs with. */
export function signerOf(issuer: string): IdentitySigner {
  return loadCallingIdentity(identityDir(), issuer).signer;
}

/** The public keys `service` accepts identities from. */
export function verifierOf(service: string): IdentityVerifier {
  return loadServiceIdentity(identityDir(), service).verifier;
}

/** A verifier that accepts every issuer's key (a test stand-in for several services). */
export function verifierOfAll(): IdentityVerifier {
  const keys = new Map();
  for (const s of IDENTITY_SERVICES)
    for (const [k, v] of loadServiceIdentity(identityDir(), s).verifier.keys) keys.set(k, v);
  return { keys };
}

/** A header for `audience` as its first caller would sign it (the gateway, or tasks toward inference). */
export function signFor(identity: Identity, audience: string, now?: number): string {
  return signIdentity(signerOf(callersOf(audience)[0]), identity, audience, now);
}
