/** Jest's global tear-down: removes the run's PGlite template (test/helpers/pglite-template.ts). */
import { rmSync } from 'node:fs';
import path from 'node:path';

export default function removePgliteTemplate(): void {
  const file = process.env.VISION_PGLITE_TEMPLATE;
  if (file && path.basename(path.dirname(file)).startsWith('vision-pglite-template-'))
    rmSync(path.dirname(file), { recursive: true, force: true });
}
