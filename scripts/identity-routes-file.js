#!/usr/bin/env node
// The Helm chart's copy of the identity route table (charts/vision/files/identity-routes.yaml), written from
// IDENTITY_ROUTES and IDENTITY_ISSUERS of the built @vision/shared (`npm run build` first). The chart derives
// from it which pods may call which (NetworkPolicies) and which public keys each pod mounts.
//   node scripts/identity-routes-file.js   writes the file (test/deploy/helm-chart.test.ts fails while it differs)
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const FILE = path.join(__dirname, '../charts/vision/files/identity-routes.yaml');

/** The file's text for a route table and the issuers' list. */
function render(routes, issuers) {
  const list = (xs) => `[${xs.join(', ')}]`;
  return [
    '# Written by scripts/identity-routes-file.js from packages/shared/src/identity/identity-routes.ts: do not edit.',
    '# The services that sign identities, and every route that takes one with the issuers it accepts.',
    `issuers: ${list(issuers)}`,
    'routes:',
    ...routes.map(
      (r) =>
        `  - { service: ${r.service}, method: ${r.method}, path: "${r.path}", issuers: ${list(r.issuers)} }`,
    ),
    '',
  ].join('\n');
}

if (require.main === module) {
  const { IDENTITY_ROUTES } = require('../packages/shared/dist/identity/identity-routes');
  const { IDENTITY_ISSUERS } = require('../packages/shared/dist/identity/identity');
  fs.writeFileSync(FILE, render(IDENTITY_ROUTES, IDENTITY_ISSUERS));
}

module.exports = { render, FILE };
