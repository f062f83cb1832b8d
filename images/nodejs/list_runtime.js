// Write the image's runtime listing (JSON, stdout) at image build time: the
// interpreter, Node's built-in modules, every npm package installed for jobs
// (/node_modules, from SANDGATE_NODE_PACKAGES) with its version, and every
// Debian package with its version. The executor reads the file from the
// image at start (GET /v1/runtime); nothing here is written by hand.
'use strict';
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const { builtinModules } = require('module');

function npmPackages(dir) {
  let names = [];
  try { names = fs.readdirSync(dir); } catch (e) { return []; }
  const out = [];
  for (const n of names.sort()) {
    if (n.startsWith('.')) continue;
    const dirs = n.startsWith('@')
      ? fs.readdirSync(path.join(dir, n)).sort().map((s) => `${n}/${s}`) : [n];
    for (const d of dirs) {
      const pj = JSON.parse(fs.readFileSync(path.join(dir, d, 'package.json'), 'utf8'));
      out.push({ name: pj.name, version: pj.version, modules: [pj.name] });
    }
  }
  return out;
}

const dpkg = execFileSync('dpkg-query', ['-W', '-f', '${Package}\t${Version}\n'],
  { encoding: 'utf8' });
const doc = {
  language: 'nodejs',
  interpreter: { name: 'node', version: process.versions.node },
  stdlib_modules: builtinModules.filter((m) => !m.startsWith('_')).sort(),
  packages: npmPackages('/node_modules'),
  system_packages: dpkg.split('\n').filter((l) => l.includes('\t')).sort()
    .map((l) => { const [name, version] = l.split('\t'); return { name, version }; }),
};
process.stdout.write(`${JSON.stringify(doc)}\n`);
