/** Copies the console's static files (HTML, CSS) beside the compiled scripts: dist/ is what the gateway serves. */
const { cpSync, mkdirSync } = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
mkdirSync(path.join(root, 'dist'), { recursive: true });
cpSync(path.join(root, 'static'), path.join(root, 'dist'), { recursive: true });
