/* global fetch, FormData, Blob, Response */
'use strict';
/** The image detection calls the benches make: one multipart body encoded once, posted with a fresh idempotency key. */
const { randomUUID } = require('node:crypto');

/** The benches' ten images (../shared/media/images): people, vehicles, boats, animals, and two with nothing. */
const TEN_IMAGES = [
  'street_bus_pedestrians_coco2006.jpg',
  'street_doubledecker_bus_coco1584.jpg',
  'street_people_car_coco9891.jpg',
  'vehicles_bicycle_pickup_dog_yolox.jpg',
  'boat_sailboat_kodim06.png',
  'fishing_standin_people_in_boat_kodim14.png',
  'sheep_coco5992.jpg',
  'cattle_cameratrap_crop.jpg',
  'none_bedroom_coco632.jpg',
  'none_brick_facade_kodim01.webp',
];

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

module.exports = { TEN_IMAGES, encodeDetection, postDetection };
