/**
 * Identity keys for tests: one directory per test file with a key pair for every issuer (what
 * standalone makes under its data dir), and the signer or verifier a service would load from it.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  callersOf,
  findIdentityRoute,
  IDENTITY_ROUTES,
  IDENTITY_SERVICES,
  type IdentityCall,
  loadCallingIdentity,
  IDENTITY_HEADER,
  signIdentity,
  type Identity,
  loadServiceIdentity,
  writeIdentityKeys,
  signJobGrant,
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

const grants = new Map<string, string>();

/** Tasks' grant for the job of `taskId` (job-grant.ts): what inference carries on the messages it publishes. */
export function jobGrantFor(taskId: string, subject = 'acme'): string {
  let g = grants.get(`${taskId}\u0000${subject}`);
  if (!g) {
    g = signJobGrant(signerOf('tasks'), {
      task_id: taskId,
      job_id: taskId,
      subject,
      scene_code: 'person_vehicle',
    });
    grants.set(`${taskId}\u0000${subject}`, g);
  }
  return g;
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

/**
 * A header for `audience` and the request `call` (method and target), signed by the first issuer the route
 * table lets call that route (the gateway on public routes, tasks toward inference jobs...).
 */
export function signFor(
  identity: Identity,
  audience: string,
  call: IdentityCall,
  now?: number,
  issuer?: string,
): string {
  const route = findIdentityRoute(IDENTITY_ROUTES, audience, call.method, call.target.split('?')[0]);
  const by = issuer ?? route?.issuers[0] ?? callersOf(audience)[0];
  return signIdentity(signerOf(by), identity, audience, call, now);
}

/** What signedAs reads of a supertest (superagent) request: its method and URL, and how to set a header. */
export interface SignableRequest {
  method: string;
  url: string;
  set(field: string, value: string): unknown;
}

/**
 * A supertest plugin (`request(url).get(path).use(signedAs(...))`) that sets the identity header for the
 * request's own method and target, as signFor signs it (by `issuer` when named).
 */
export function signedAs(
  identity: Identity,
  audience: string,
  issuer?: string,
): (req: SignableRequest) => void {
  return (req) => {
    const url = new URL(req.url, 'http://localhost');
    const call = { method: req.method, target: `${url.pathname}${url.search}` };
    req.set(IDENTITY_HEADER, signFor(identity, audience, call, undefined, issuer));
  };
}
