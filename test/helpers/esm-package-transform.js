/**
 * Jest transform for the ES-module-only packages in node_modules that the code requires (@platformatic/kafka and
 * its own packages): Node 26 loads them with require(esm), but jest's module system runs CommonJS only (its
 * require(esm) needs --experimental-vm-modules). TypeScript transpiles each file to CommonJS; `import.meta.url`,
 * which CommonJS has no syntax for, becomes the file's URL, and a module's own `require` made with createRequire
 * is dropped for the one CommonJS gives it.
 */
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const ts = require('typescript');

const self = readFileSync(__filename, 'utf8');

module.exports = {
  getCacheKey(source, filename) {
    return createHash('sha256').update(self).update(ts.version).update(filename).update(source).digest('hex');
  },
  process(source, filename) {
    const code = source
      .replace(/\bconst require = createRequire\(import\.meta\.url\);/g, '')
      .replace(/\bimport\.meta\.url\b/g, "require('node:url').pathToFileURL(__filename).href");
    const out = ts.transpileModule(code, {
      fileName: filename,
      compilerOptions: {
        module: ts.ModuleKind.CommonJS,
        target: ts.ScriptTarget.ES2022,
        allowJs: true,
        esModuleInterop: true,
        sourceMap: false,
      },
    });
    return { code: out.outputText };
  },
};
