#!/usr/bin/env node
// The Helm chart's list of the services that use the bus (charts/vision/files/bus-services.yaml), written from
// BUS_GRANTS of the built @vision/shared (`npm run build` first). The chart derives from it which pods get a Kafka
// principal (KAFKA_SASL_USERNAME and its password file) and which principals its migration Job provisions (the ACLs
// come from BUS_GRANTS itself, in scripts/bus-principals.js).
//   node scripts/bus-services-file.js   writes the file (test/deploy/helm-chart.test.ts fails while it differs)
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const FILE = path.join(__dirname, '../charts/vision/files/bus-services.yaml');

/** The file's text for a grants table (BUS_GRANTS: service -> its grant). */
function render(grants) {
  return [
    '# Written by scripts/bus-services-file.js from packages/shared/src/bus/kafka-principals.ts: do not edit.',
    '# The services that use the bus, each signed in as a Kafka principal of its own (BUS_SERVICES).',
    `services: [${Object.keys(grants).sort().join(', ')}]`,
    '',
  ].join('\n');
}

if (require.main === module) {
  const { BUS_GRANTS } = require('../packages/shared/dist/bus/kafka-principals');
  fs.writeFileSync(FILE, render(BUS_GRANTS));
}

module.exports = { render, FILE };
