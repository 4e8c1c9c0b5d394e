/* global fetch, FormData, Blob, Response */
'use strict';
/** The image detection calls the benches make: one multipart body encoded once, posted with a fresh idempotency key. */
const { randomUUID } = require('node:crypto');

/** The body of a call detecting `indices` of `images` (named by `names`), encoded once so every post reuses it. */
async function encodeDetection(images, names, indices) {
  const f = new FormData();
  f.append('scene_code', 'person_vehicle');
  for (const i of indices) f.append('files', new Blob([images[i]]), names[i]);
  const r = new Response(f);
  return {
    body: Buffer.from(await r.arrayBuffer()),
    type: r.headers.get('content-type'),
    count: indices.length,
  };
}

/** Posts `form` to `url`; throws unless it is answered 201 with every image succeeded. */
async function postDetection(url, apiKey, form) {
  const res = await fetch(url, {
    method: 'POST',
    body: form.body,
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': form.type,
      'idempotency-key': randomUUID(),
    },
  });
  const body = await res.json();
  if (res.status !== 201) throw new Error(`${url} answered ${res.status}: ${JSON.stringify(body)}`);
  const ok = body.results.filter((x) => x.status === 'succeeded').length;
  if (ok !== form.count) throw new Error(`${form.count - ok} images failed: ${JSON.stringify(body.results)}`);
}

module.exports = { encodeDetection, postDetection };
