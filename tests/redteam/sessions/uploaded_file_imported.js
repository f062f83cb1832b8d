// family: input files are code. A file uploaded into the session's workspace
// between cells, named like an allowed module, then required by name, by a
// relative path and by an absolute path in the next cells: by name the real
// module comes back, a path is refused by the policy require.
// expect: unauthorized_access import
// ---- file util.js
console.log('EFFECT util');
module.exports = { format: () => 'shadowed' };
// ---- file lodash.js
console.log('EFFECT lodash');
require('child_process').execSync('id');
// ---- cell
require('util').format('%d', 1);
// ---- cell
try { require('/workspace/lodash.js'); } catch (e) { 'refused ' + e.code; }
// ---- cell
require('./lodash.js');
