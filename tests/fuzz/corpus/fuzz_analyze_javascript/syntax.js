#!/usr/bin/env node
let re = /a\/b[/]/g, t = `x${`y${1}`}`;
label: for (const [k, {v = 1}] of m) { if (k) continue label; }
