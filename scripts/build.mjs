// Bundles the extension into one CommonJS file. dockerode's ssh transport has optional native
// add-ons; ssh2 falls back to pure JavaScript without them, so they stay external.
import { build } from 'esbuild';

const production = !process.argv.includes('--dev');
const result = await build({
  entryPoints: ['extension/src/extension.ts'],
  bundle: true,
  outfile: 'dist/extension.js',
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external: ['vscode', 'cpu-features', '*.node'],
  minify: production,
  sourcemap: production ? false : 'inline',
  metafile: true,
  logLevel: 'warning',
});
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
console.log(`dist/extension.js ${(bytes / 1024).toFixed(0)} KiB`);
