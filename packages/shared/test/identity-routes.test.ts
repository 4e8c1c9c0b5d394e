/**
 * Every route of the route table (IDENTITY_ROUTES), called with a header from every issuer, each signed
 * with that issuer's real key for that very request: accepted exactly where the table lists the issuer,
 * 401 everywhere else. The service holds every issuer's public key here, so a refusal is the table's and
 * not a missing key's. Then: the routes the services register are exactly the table's.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import {
  callHash,
  callersOf,
  createLogger,
  createServiceApp,
  IDENTITY_HEADER,
  IDENTITY_ROUTES,
  identityOf,
  type IdentityAudience,
  type IdentityCall,
  type IdentityVerifier,
} from '../src';

const ISSUERS = ['gateway', 'tasks', 'images', 'results', 'inference'] as const;
const keys = Object.fromEntries(ISSUERS.map((i) => [i, generateKeyPairSync('ed25519')]));
const verifier: IdentityVerifier = { keys: new Map(ISSUERS.map((i) => [i, keys[i].publicKey])) };
const logger = createLogger('identity-routes', { level: 'silent' });

/** A header as `issuer`'s key holder makes it for `audience` and `call` (no scope check: any issuer). */
function headerOf(issuer: string, audience: string, call: IdentityCall): string {
  const now = Date.now();
  const claims = {
    sub: 'walker',
    rid: 'r',
    iss: issuer,
    aud: audience,
    call: callHash(call),
    iat: now,
    exp: now + 10_000,
  };
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${sign(null, Buffer.from(payload), keys[issuer].privateKey).toString('base64url')}`;
}

/** A service app with a handler on every route of its table that answers the issuer it saw. */
function appOf(service: IdentityAudience) {
  return createServiceApp({ name: service, logger, identity: verifier }, (app) => {
    for (const r of IDENTITY_ROUTES.filter((x) => x.service === service)) {
      const verb = r.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
      app[verb](r.path, (_req, res) => void res.json({ issuer: identityOf(res).issuer }));
    }
  });
}

const concrete = (p: string) => p.replace(/:[a-z_]+/g, 'id-1');
const SERVICES: IdentityAudience[] = ['tasks', 'quota', 'results', 'images', 'inference'];

describe('the route table, walked with every issuer', () => {
  for (const service of SERVICES) {
    it(`${service}: each route opens to exactly the issuers the table lists`, async () => {
      const app = appOf(service);
      const seen: string[] = [];
      for (const r of IDENTITY_ROUTES.filter((x) => x.service === service)) {
        const target = concrete(r.path);
        for (const issuer of ISSUERS) {
          const call = { method: r.method, target };
          const verb = r.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
          const res = await request(app)
            [verb](target)
            .set(IDENTITY_HEADER, headerOf(issuer, service, call));
          const allowed = (r.issuers as readonly string[]).includes(issuer);
          seen.push(`${r.method} ${r.path} ${issuer} ${res.status}`);
          expect({ route: `${r.method} ${r.path}`, issuer, status: res.status }).toEqual({
            route: `${r.method} ${r.path}`,
            issuer,
            status: allowed ? 200 : 401,
          });
          if (allowed) expect(res.body).toEqual({ issuer });
          else expect(res.body.error.code).toBe('OP-AUTH-REQUIRED');
        }
        // No header at all, and a header made for another route of the same service.
        const verb = r.method.toLowerCase() as 'get' | 'post' | 'put' | 'delete';
        expect((await request(app)[verb](target)).status).toBe(401);
        const elsewhere = headerOf(r.issuers[0], service, { method: r.method, target: `${target}/other` });
        expect((await request(app)[verb](target).set(IDENTITY_HEADER, elsewhere)).status).toBe(401);
      }
      expect(seen.length).toBeGreaterThan(0);
    });
  }

  it('a route the table does not list is 404 for every caller of the service; hostile issuers are 401, never 500', async () => {
    const app = appOf('tasks');
    for (const issuer of ISSUERS) {
      const call = { method: 'DELETE', target: '/v1/vision/tasks/t1' };
      const res = await request(app)
        .delete(call.target)
        .set(IDENTITY_HEADER, headerOf(issuer, 'tasks', call));
      // 404 for the callers of tasks (gateway, results); the others' keys do not speak to tasks at all.
      expect([issuer, res.status]).toEqual([issuer, callersOf('tasks').includes(issuer) ? 404 : 401]);
    }
    const call = { method: 'GET', target: '/v1/vision/tasks/t1' };
    for (const iss of ['constructor', '__proto__', 'toString', 'x'.repeat(5000), 7, null]) {
      const now = Date.now();
      const claims = {
        sub: 's',
        rid: 'r',
        iss,
        aud: 'tasks',
        call: callHash(call),
        iat: now,
        exp: now + 1000,
      };
      const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
      const header = `${payload}.${sign(null, Buffer.from(payload), keys.gateway.privateKey).toString('base64url')}`;
      const res = await request(app).get(call.target).set(IDENTITY_HEADER, header);
      expect({ iss, status: res.status }).toEqual({ iss, status: 401 });
    }
  });
});

/** The routes a service's http/ folder registers: `app.<verb>(<path>` with a literal or a named constant. */
function registeredRoutes(service: string): string[] {
  const root = path.resolve(__dirname, '../../../services', service, 'src', 'http');
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  const sources = files.map((f) => readFileSync(path.join(root, f), 'utf8'));
  const constants = new Map<string, string>();
  for (const src of sources)
    for (const m of src.matchAll(/(?:export )?const (\w+) = ['`]([^'`]+)['`];/g)) constants.set(m[1], m[2]);
  const out: string[] = [];
  for (const src of sources)
    for (const m of src.matchAll(/\bapp\.(get|post|put|delete)\(\s*(?:'([^']+)'|`([^`]+)`|(\w+))/g)) {
      const raw = m[2] ?? m[3] ?? constants.get(m[4]) ?? `?${m[4]}`;
      const p = raw.replace(/\$\{(\w+)\}/g, (_, name: string) => constants.get(name) ?? `?${name}`);
      out.push(`${m[1].toUpperCase()} ${p.replace(/:[A-Za-z_]+/g, ':_')}`);
    }
  return out;
}

describe('the services register exactly the routes of the table', () => {
  for (const service of SERVICES) {
    it(service, () => {
      const admin = '/internal/v1/admin';
      const registered = registeredRoutes(service).filter((r) => !r.split(' ')[1].startsWith(admin));
      const table = IDENTITY_ROUTES.filter((r) => r.service === service).map(
        (r) => `${r.method} ${r.path.replace(/:[A-Za-z_]+/g, ':_')}`,
      );
      expect(registered.sort()).toEqual(table.sort());
    });
  }
});
