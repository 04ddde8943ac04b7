/**
 * Extension-host tests against the real Docker engine. Object names carry the test prefix
 * from TOOLBOX_VSCODE_NAME_PREFIX (set by scripts/e2e.sh and the GitHub workflow), and every
 * object of that prefix is removed afterwards.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ToolboxTestApi } from '../../extension/src/extension';
import { objectNames } from '../../extension/src/contract/objects';
import { docker, removeNamespaceObjects } from '../support/docker';

const EXTENSION_ID = 'toolbox-dev.toolbox-vscode';

async function api(): Promise<ToolboxTestApi> {
  const ext = vscode.extensions.getExtension<ToolboxTestApi>(EXTENSION_ID);
  assert.ok(ext, `${EXTENSION_ID} is not installed in this extension host`);
  return ext.activate();
}

function folder(): vscode.WorkspaceFolder {
  const f = vscode.workspace.workspaceFolders?.[0];
  assert.ok(f, 'the suite needs a workspace folder');
  return f;
}

async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 60_000,
  seen: () => string = () => '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}. ${seen()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('Toolbox extension', () => {
  const prefix = process.env.TOOLBOX_VSCODE_NAME_PREFIX;

  before(() => {
    assert.ok(prefix && prefix !== 'toolbox', 'set TOOLBOX_VSCODE_NAME_PREFIX so the tests never touch real toolbox containers');
  });

  after(async () => {
    if (prefix && prefix !== 'toolbox') await removeNamespaceObjects(docker(), objectNames(prefix));
  });

  it('registers every command the manifest contributes', async () => {
    await api();
    const manifest = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
      contributes: { commands: Array<{ command: string }> };
    };
    const registered = new Set(await vscode.commands.getCommands(true));
    const missing = manifest.contributes.commands.map((c) => c.command).filter((c) => !registered.has(c));
    assert.deepEqual(missing, []);
  });

  it('reads peer messaging per folder: the folder setting, then .toolbox.yaml, then the default', async () => {
    const toolbox = await api();
    const f = folder();
    const config = () => vscode.workspace.getConfiguration('toolbox', f.uri);
    const yaml = join(f.uri.fsPath, '.toolbox.yaml');
    const before = (() => {
      try {
        return readFileSync(yaml, 'utf8');
      } catch {
        return undefined;
      }
    })();
    try {
      assert.equal(await toolbox.peerWanted(f.uri.fsPath), true);
      await config().update('peerMessaging', false, vscode.ConfigurationTarget.WorkspaceFolder);
      assert.equal(await toolbox.peerWanted(f.uri.fsPath), false);
      await config().update('peerMessaging', undefined, vscode.ConfigurationTarget.WorkspaceFolder);
      writeFileSync(yaml, 'peer_messaging: false\n');
      assert.equal(await toolbox.peerWanted(f.uri.fsPath), false);
      await config().update('peerMessaging', true, vscode.ConfigurationTarget.WorkspaceFolder);
      assert.equal(await toolbox.peerWanted(f.uri.fsPath), true, 'the folder setting wins over .toolbox.yaml');
    } finally {
      await config().update('peerMessaging', undefined, vscode.ConfigurationTarget.WorkspaceFolder);
      if (before === undefined) rmSync(yaml, { force: true });
      else writeFileSync(yaml, before);
    }
  });

  it('Open Toolbox Shell creates the folder container and opens a terminal in it', async () => {
    const toolbox = await api();
    const opened = await vscode.commands.executeCommand<unknown>('toolbox.openShell');
    assert.ok(opened, 'Open Toolbox Shell failed: the Toolbox output channel says why');
    const shell = await waitFor('the shell to be listed', () => toolbox.lastOpened);
    assert.equal(shell.folder, folder().uri.fsPath);
    assert.ok(shell.container.startsWith(`${prefix}-`), `container ${shell.container} carries the test prefix`);
    const info = await docker().getContainer(shell.containerId).inspect();
    assert.equal(info.State.Running, true);
    // The host name is the container's name, not its id (docs/decisions/0012-container-host-name-and-shell.md).
    assert.equal(info.Config.Hostname, shell.container);

    shell.terminal.sendText('echo "host=$(uname -n)"');
    const transcript = () => `The terminal shows:\n${shell.pty.transcript}`;
    await waitFor('the hostname in the terminal', () => shell.pty.transcript.includes(`host=${info.Config.Hostname}`), 60_000, transcript);
  });

  it('shows the exit code when the shell ends with one', async () => {
    const toolbox = await api();
    const shell = await waitFor('an open shell', () => toolbox.lastOpened);
    shell.terminal.sendText('exit 3');
    await waitFor(
      'the exit line',
      () => shell.pty.transcript.includes('[process exited with code 3]'),
      60_000,
      () => shell.pty.transcript,
    );
  });

  it('opens several shells in one container, and closes them when the container goes away', async () => {
    const toolbox = await api();
    const first = (await vscode.commands.executeCommand<unknown>('toolbox.openShell')) as ToolboxTestApi['lastOpened'];
    const second = (await vscode.commands.executeCommand<unknown>('toolbox.openShell')) as ToolboxTestApi['lastOpened'];
    assert.ok(first && second, 'Open Toolbox Shell failed: the Toolbox output channel says why');
    assert.equal(first.containerId, second.containerId, 'both shells attach to the folder container');
    assert.notEqual(first.terminal, second.terminal);
    first.terminal.sendText('echo "one=$$"');
    second.terminal.sendText('echo "two=$$"');
    await waitFor(
      'both shells to answer',
      () => /one=\d+/.test(first.pty.transcript) && /two=\d+/.test(second.pty.transcript),
      60_000,
      () => `first:\n${first.pty.transcript}\nsecond:\n${second.pty.transcript}`,
    );

    const closed = new Set<vscode.Terminal>();
    const sub = vscode.window.onDidCloseTerminal((t) => closed.add(t));
    try {
      // Stop Container asks first (naming the two shells): confirmed, as a keybinding can.
      await vscode.commands.executeCommand('toolbox.stopContainer', first.container, { confirmed: true });
      await waitFor('both terminals to close', () => closed.has(first.terminal) && closed.has(second.terminal));
      assert.ok(!toolbox.shells.some((s) => s.containerId === first.containerId), 'closed shells are no longer listed');
    } finally {
      sub.dispose();
    }
  });

  it('opens a named shell in a container of its own, named as the CLI names it, in its configured path', async () => {
    const toolbox = await api();
    // As upstream's `toolbox shell <name>`, the shell must be configured (shells.<name>.path in ~/.toolbox.yaml).
    const userFile = join(process.env.HOME ?? '', '.toolbox.yaml');
    const saved = (() => {
      try {
        return readFileSync(userFile, 'utf8');
      } catch {
        return undefined;
      }
    })();
    const shellPath = folder().uri.fsPath;
    writeFileSync(userFile, `shells:\n  infra tools:\n    path: ${shellPath}\n`);
    let named: ToolboxTestApi['lastOpened'];
    try {
      named = (await vscode.commands.executeCommand<unknown>(
        'toolbox.openNamedShell',
        folder().uri,
        'Infra Tools',
      )) as ToolboxTestApi['lastOpened'];
    } finally {
      if (saved === undefined) rmSync(userFile, { force: true });
      else writeFileSync(userFile, saved);
    }
    assert.ok(named, 'Open Toolbox Shell by Name failed: the Toolbox output channel says why');
    assert.equal(named.container, `${prefix}-named-infra-tools.peer`);
    const info = await docker().getContainer(named.containerId).inspect();
    assert.equal(info.State.Running, true);
    assert.ok(info.Mounts.some((m) => m.Destination === '/workspace' && m.Source === shellPath));
    assert.match(info.HostConfig.PidMode ?? '', /^container:/, 'peer messaging is on by default, so it joins the anchor');
    named.terminal.sendText('echo "named=$(uname -n)"');
    await waitFor(
      'the named shell to answer',
      () => named.pty.transcript.includes(`named=${info.Config.Hostname}`),
      60_000,
      () => named.pty.transcript,
    );
    assert.ok(toolbox.shells.some((sh) => sh.containerId === named.containerId));
  });

  it('Stop Every Container… stops every shell and the anchor, and keeps the socket volume', async () => {
    await api();
    const names = objectNames(prefix);
    await vscode.commands.executeCommand('toolbox.openShell');
    const before = await docker().listContainers({ all: true, filters: { name: [names.prefix] } });
    assert.ok(
      before.some((c) => c.Names.includes(`/${names.anchor}`)),
      'the anchor runs before the stop',
    );
    await vscode.commands.executeCommand('toolbox.stopAll', { confirmed: true });
    const left = (await docker().listContainers({ all: true, filters: { name: [names.prefix] } })).filter(
      (c) => c.State !== 'removing' && c.Names.some((n) => names.isOurs(n)),
    );
    assert.deepEqual(
      left.map((c) => c.Names[0]),
      [],
    );
    await docker().getVolume(names.socketVolume).inspect(); // throws if the volume was removed
  });
});
