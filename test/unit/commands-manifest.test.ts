/**
 * Every command package.json contributes is registered (COMMANDS in ui/commands/registerCommands.ts, the one
 * registration point), and every registered command is contributed, but for the few the UI runs
 * by itself. The extension-host suite checks the first half in a real VS Code; this is the same
 * check without one, both ways, on the stand-in vscode module.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { installVscodeLite } from '../support/vscodeLite';

/** Registered but not contributed: run by the UI itself, never from a menu or the palette. */
const INTERNAL: Record<string, string> = {
  'toolbox.focusTerminal': "a session row's click, the nudge's Focus and the status bar item, with the terminal's key",
};

describe('the commands', () => {
  installVscodeLite();
  const { COMMANDS } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../extension/src/ui/commands/registerCommands') as typeof import('../../extension/src/ui/commands/registerCommands');
  const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
    contributes: { commands: Array<{ command: string; title?: string; category?: string }> };
  };
  const registered = COMMANDS.map((c) => c.id);
  const contributed = pkg.contributes.commands.map((c) => c.command);

  it('are registered once each', () => {
    assert.deepEqual(
      registered.filter((id, i) => registered.indexOf(id) !== i),
      [],
    );
    assert.ok(registered.length > 30);
  });

  it('contributed in package.json are all registered', () => {
    assert.deepEqual(
      contributed.filter((id) => !registered.includes(id)),
      [],
    );
  });

  it('registered are all contributed, but for the internal ones', () => {
    assert.deepEqual(
      registered.filter((id) => !contributed.includes(id) && !(id in INTERNAL)),
      [],
    );
    for (const id of Object.keys(INTERNAL)) assert.ok(registered.includes(id) && !contributed.includes(id), `${id} is internal`);
  });

  it('have a title and the Toolbox category', () => {
    for (const c of pkg.contributes.commands) {
      assert.ok(c.title && c.title.trim() !== '', `${c.command} has a title`);
      assert.equal(c.category, 'Toolbox', c.command);
    }
  });
});
