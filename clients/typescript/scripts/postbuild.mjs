// Marks each output folder with its module system, so Node loads dist/esm as
// ES modules and dist/cjs as CommonJS whatever the importing project says.
import { writeFileSync } from "node:fs";

writeFileSync(new URL("../dist/esm/package.json", import.meta.url), '{"type": "module"}\n');
writeFileSync(new URL("../dist/cjs/package.json", import.meta.url), '{"type": "commonjs"}\n');
