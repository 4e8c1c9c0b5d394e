#!/usr/bin/env node
// The services' identity keys (docs/SECURITY.md), made with the built @vision/shared (`npm run build` first):
//   node scripts/identity-keys.js DIR                  one directory per service under DIR (DIR/gateway, DIR/tasks, ...),
//                                                       each with exactly what that service reads; kept when complete
//   node scripts/identity-keys.js --kubernetes NAME    a Secret manifest NAME holding every key pair, on stdout
//                                                       (the Helm chart's secrets.existingIdentitySecret)
'use strict';
const path = require('node:path');
const {
  generateIdentityKeys,
  writeServiceIdentityDirs,
} = require('../packages/shared/dist/identity/identity-keys');

const args = process.argv.slice(2);
if (args[0] === '--kubernetes' && args[1]) {
  const data = [];
  for (const [issuer, pair] of Object.entries(generateIdentityKeys())) {
    data.push(`  ${issuer}.key: ${Buffer.from(pair.key).toString('base64')}`);
    data.push(`  ${issuer}.pub: ${Buffer.from(pair.pub).toString('base64')}`);
  }
  const manifest = [
    'apiVersion: v1',
    'kind: Secret',
    'metadata:',
    `  name: ${args[1]}`,
    'type: Opaque',
    'data:',
  ];
  process.stdout.write(`${[...manifest, ...data].join('\n')}\n`);
} else if (args.length === 1 && !args[0].startsWith('-')) {
  const dirs = writeServiceIdentityDirs(path.resolve(args[0]));
  for (const [service, dir] of Object.entries(dirs)) process.stdout.write(`${service}: ${dir}\n`);
} else {
  process.stderr.write('usage: identity-keys.js DIR | --kubernetes SECRET_NAME\n');
  process.exit(2);
}
