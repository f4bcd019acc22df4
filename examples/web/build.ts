/** `npm run build:web`: the progress page into examples/web/dist/. */
import { fileURLToPath } from 'node:url';
import { bundleProgressPage } from './bundle.js';

const outdir = fileURLToPath(new URL('dist', import.meta.url));
await bundleProgressPage(outdir);
console.log(`Progress page built: ${outdir}/index.html`);
