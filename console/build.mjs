// build.mjs OUTDIR - bundle the console with esbuild into OUTDIR:
// app-<hash>.js, app-<hash>.css and index.html naming them (so the gateway
// may cache the assets forever). Nothing here is fetched at run time.
import { build } from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync, readdirSync, rmSync } from 'node:fs';
import { join, basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) {
  console.error('usage: node build.mjs OUTDIR');
  process.exit(2);
}
mkdirSync(out, { recursive: true });
for (const f of readdirSync(out)) rmSync(join(out, f), { recursive: true, force: true });
const result = await build({
  entryPoints: { app: join(here, 'src/main.js'), style: join(here, 'src/app.css') },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['es2020'],
  entryNames: '[name]-[hash]',
  outdir: out,
  metafile: true,
  legalComments: 'linked',
  logLevel: 'warning',
});
const names = Object.keys(result.metafile.outputs).map((p) => basename(p));
const js = names.find((n) => /^app-.*\.js$/.test(n));
const css = names.find((n) => /^style-.*\.css$/.test(n));
const html = readFileSync(join(here, 'src/index.html'), 'utf8')
  .replace('href="app.css"', `href="${css}"`)
  .replace('src="app.js"', `src="${js}"`);
writeFileSync(join(out, 'index.html'), html);
console.log(`console: ${out}: index.html ${js} ${css}`);
