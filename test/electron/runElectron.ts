/**
 * Runs the extension-host suite (test/suite) in VS Code desktop through @vscode/test-electron.
 * Used by the GitHub workflow under Xvfb; this project's own machines cannot download VS Code,
 * so there the same suite runs inside code-server instead (scripts/e2e.sh).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runTests } from '@vscode/test-electron';

async function main(): Promise<void> {
  const root = resolve(__dirname, '../../..');
  const workspace = mkdtempSync(join(tmpdir(), 'toolbox-suite-ws-'));
  await runTests({
    version: process.env.VSCODE_VERSION ?? 'stable',
    extensionDevelopmentPath: root,
    extensionTestsPath: join(root, 'out/test/suite/index.js'),
    launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust'],
    extensionTestsEnv: {
      TOOLBOX_VSCODE_NAME_PREFIX: process.env.TOOLBOX_VSCODE_NAME_PREFIX ?? 'tbxci',
      TOOLBOX_VSCODE_BUILD_ARGS: process.env.TOOLBOX_VSCODE_BUILD_ARGS ?? '{"INSTALL_AGENTS":"0"}',
    },
  });
}

main().catch((err: unknown) => {
  console.error('Extension-host tests failed:', err);
  process.exit(1);
});
