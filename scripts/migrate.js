#!/usr/bin/env node
// Runs every service's database migrations (or those named) and exits: `node scripts/migrate.js [schema...]`.
// Needs `npm run build` first. Used by the Helm pre-install/pre-upgrade Job and the compose init service.
require('../apps/standalone/dist/migrate.js').migrateMain(process.argv.slice(2));
