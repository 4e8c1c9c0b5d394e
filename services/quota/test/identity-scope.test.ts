/**
 * Which identities open the quota service's routes (IDENTITY_ROUTES): video charges are tasks', holds and
 * leases are images', the caller's quota read is the gateway's. A key that opens one route opens no other.
 */
import { signedAs } from '../../../test/helpers/identity';
import { type Harness, startHarness } from './helpers';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const by = (issuer: string, subject = 'acme') =>
  signedAs({ subject, requestId: `req-${issuer}` }, 'quota', issuer);

describe('identity scope of the quota routes', () => {
  it("refuses tasks' key on the routes tasks does not call: leases, holds and the caller's quota read", async () => {
    const refused = [
      h.http.put('/internal/v1/leases/l-1').send({ kind: 'image', min_units: 1, max_units: 2 }),
      h.http.post('/internal/v1/leases/l-1/spends').send({ spends: [] }),
      h.http.post('/internal/v1/leases/l-1/close').send({}),
      h.http.post('/internal/v1/holds').send({ hold_id: 'h-1', kind: 'image', units: 1 }),
      h.http.post('/internal/v1/holds/h-1/settle').send({ units: 1 }),
      h.http.get('/v1/vision/quota'),
    ];
    for (const call of refused) {
      const res = await call.use(by('tasks'));
      expect({ status: res.status, code: res.body.error?.code }).toEqual({
        status: 401,
        code: 'OP-AUTH-REQUIRED',
      });
    }
    // What tasks does call: a video charge and its refund.
    const charge = await h.http
      .post('/internal/v1/charges')
      .use(by('tasks'))
      .send({ charge_id: 't-1', kind: 'video', units: 1 });
    expect(charge.status).toBe(201);
    expect((await h.http.post('/internal/v1/charges/t-1/refund').use(by('tasks'))).status).toBe(200);
  });

  it("refuses images' and the gateway's keys on charges, and images' key on the caller's quota read", async () => {
    for (const issuer of ['images', 'gateway']) {
      const res = await h.http
        .post('/internal/v1/charges')
        .use(by(issuer))
        .send({ charge_id: `t-${issuer}`, kind: 'video', units: 1 });
      expect({ issuer, status: res.status }).toEqual({ issuer, status: 401 });
      const refund = await h.http.post('/internal/v1/charges/t-1/refund').use(by(issuer));
      expect({ issuer, status: refund.status }).toEqual({ issuer, status: 401 });
    }
    expect((await h.http.get('/v1/vision/quota').use(by('images'))).status).toBe(401);
    expect((await h.http.get('/v1/vision/quota').use(by('gateway'))).status).toBe(200);
  });
});
