/**
 * The extension-host suite's entry point: `run()` is what @vscode/test-electron (GitHub
 * workflow) and the code-server payload runner (scripts/e2e.sh) load. Mocha, because that is
 * what both hosts expect of an extensionTestsPath module.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import Mocha from 'mocha';

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: 'bdd', color: false, timeout: 600_000 });
  for (const f of readdirSync(__dirname)
    .filter((n) => n.endsWith('.suite.js'))
    .sort()) {
    mocha.addFile(join(__dirname, f));
  }
  return new Promise((resolve, reject) => {
    mocha.run((failures) => (failures > 0 ? reject(new Error(`${failures} extension-host test(s) failed.`)) : resolve()));
  });
}
