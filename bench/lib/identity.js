'use strict';
/** Identity keys for a bench's own services: a fresh directory with every issuer's pair (as standalone makes). */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const shared = require('../../packages/shared/dist');

/** VISION_IDENTITY_DIR when set (services started elsewhere), else a new directory of keys. */
function benchIdentityDir() {
  if (process.env.VISION_IDENTITY_DIR) return process.env.VISION_IDENTITY_DIR;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vision-bench-identity-'));
  shared.writeIdentityKeys(dir);
  return dir;
}

/** The key `issuer` signs with, from `dir`. */
function signerOf(dir, issuer) {
  return shared.loadCallingIdentity(dir, issuer).signer;
}

module.exports = { benchIdentityDir, signerOf };
