// Bundles the extension into one CommonJS file. dockerode's ssh transport has optional native
// add-ons; ssh2 falls back to pure JavaScript without them, so they stay external.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

// dockerode carries a BuildKit client (gRPC + protobuf, ~380 KB minified) used only for
// `buildImage(…, {version: '2'})`. We build with the classic builder, so both modules are
// replaced by stubs that fail loudly if anything ever reaches them.
const withoutBuildKit = {
  name: 'without-buildkit',
  setup(b) {
    b.onResolve({ filter: /^\.\/(session|buildkit)$/ }, (args) =>
      /dockerode[\\/]lib/.test(args.importer) ? { path: args.path, namespace: 'buildkit-stub' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'buildkit-stub' }, () => ({
      contents:
        "const e = () => new Error('BuildKit builds are not bundled in Toolbox; the runtime image uses the classic builder.');\n" +
        'module.exports = function withSession(_d, _a, cb) { cb(e()); };\n' +
        'module.exports.followProgress = function () { throw e(); };\n',
      loader: 'js',
    }));
  },
};

// \`import * as vscode from 'vscode'\` compiles, in every module that has it, to its own copy of
// the API object's ~400 properties (esbuild's CommonJS interop). With 30-odd such modules that
// copying was most of the activation bundle's require time. Resolving 'vscode' to one module
// that re-exports it makes the copy once per bundle.
const vscodeOnce = {
  name: 'vscode-once',
  setup(b) {
    b.onResolve({ filter: /^vscode$/ }, (args) =>
      args.namespace === 'vscode-once' ? { path: 'vscode', external: true } : { path: 'vscode', namespace: 'vscode-once' },
    );
    b.onLoad({ filter: /.*/, namespace: 'vscode-once' }, () => ({ contents: "export * from 'vscode';", loader: 'js' }));
  },
};

const production = !process.argv.includes('--dev');
const result = await build({
  // Two bundles: the activation-time UI shell, and the engine/config/bridge backend it requires
  // on first use (zod, yaml and dockerode are most of the bytes and of the parse time).
  entryPoints: { extension: 'extension/src/extension.ts', backend: 'extension/src/backend/engineBackend.ts' },
  bundle: true,
  outdir: 'dist',
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  external: ['vscode', 'cpu-features', '*.node'],
  minify: production,
  sourcemap: production ? false : 'inline',
  metafile: true,
  plugins: [withoutBuildKit, vscodeOnce],
  logLevel: 'warning',
});
for (const [file, out] of Object.entries(result.metafile.outputs)) {
  if (file.endsWith('.js')) console.log(`${file} ${(out.bytes / 1024).toFixed(0)} KiB`);
}

// The JSON Schema of .toolbox.yaml, generated from the zod schema (extension/src/config/jsonSchema.ts)
// and shipped for the YAML language support (package.json yamlValidation). Bundled in memory and
// evaluated here, so the file always matches the schema the backend validates with.
const generator = await build({
  entryPoints: ['extension/src/config/jsonSchema.ts'],
  bundle: true,
  write: false,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  logLevel: 'warning',
});
const schemaModule = { exports: {} };
new Function('module', 'exports', 'require', generator.outputFiles[0].text)(
  schemaModule,
  schemaModule.exports,
  createRequire(import.meta.url),
);
const { JSON_SCHEMA_FILE, toolboxJsonSchemaText } = schemaModule.exports;
const schemaText = toolboxJsonSchemaText();
let previous = '';
try {
  previous = readFileSync(JSON_SCHEMA_FILE, 'utf8');
} catch {
  // first build
}
if (previous !== schemaText) {
  writeFileSync(JSON_SCHEMA_FILE, schemaText);
  console.log(`${JSON_SCHEMA_FILE} regenerated (commit it)`);
} else {
  console.log(`${JSON_SCHEMA_FILE} up to date`);
}
