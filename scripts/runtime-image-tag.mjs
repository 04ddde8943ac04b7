// Prints the runtime image's tag exactly as the extension computes it (runtimeImageTag and
// publishedRuntimeImageRef in extension/src/engine/imageBuild.ts, bundled on the fly so there
// is one source of truth), for the workflow that publishes the image (.github/workflows/
// runtime-image.yml) and for the bench.
//
//   node scripts/runtime-image-tag.mjs                 toolbox-vscode/runtime:<hash>
//   node scripts/runtime-image-tag.mjs --published     ghcr.io/<path>:<hash>
//   node scripts/runtime-image-tag.mjs --published --mirror 127.0.0.1:5000
//   node scripts/runtime-image-tag.mjs --build-args '{"INSTALL_AGENTS":"0"}'
//   node scripts/runtime-image-tag.mjs --label         dev.toolbox.runtime.context=<hash>
//
// Without --build-args the build arguments are the product's default (none): the image a user
// without extra certificate authorities gets.
import { build } from 'esbuild';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const value = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const buildArgs = JSON.parse(value('--build-args') ?? '{}');

const out = await build({
  entryPoints: [join(root, 'extension/src/engine/imageBuild.ts')],
  bundle: true,
  write: false,
  platform: 'node',
  format: 'cjs',
  external: ['dockerode'],
  logLevel: 'error',
});
const mod = { exports: {} };
new Function('module', 'exports', 'require', out.outputFiles[0].text)(mod, mod.exports, createRequire(import.meta.url));
const { runtimeImageTag, publishedRuntimeImageRef, runtimeImageLabels } = mod.exports;

const tag = runtimeImageTag(root, buildArgs);
if (args.includes('--label')) {
  for (const [k, v] of Object.entries(runtimeImageLabels(root, buildArgs))) console.log(`${k}=${v}`);
} else {
  console.log(args.includes('--published') ? publishedRuntimeImageRef(tag, value('--mirror')) : tag);
}
