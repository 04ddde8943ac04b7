/**
 * package.json against the names the code uses (contract/manifest.ts) and the first-run
 * promises of issue 13: where toolbox.dockerHost may be set, view names, the walkthrough.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  WALKTHROUGH_ID,
  CONTEXT_KEYS,
  COMMAND_LABELS,
  SETTINGS,
  VSCODE_GIT_DEFAULTS,
  EXTENSION_VERSION,
  SECCOMP_PROFILES,
} from '../../extension/src/contract/manifest';

const root = join(__dirname, '../../..');
interface Step {
  id: string;
  title: string;
  description: string;
  media: { markdown?: string };
  completionEvents?: string[];
}
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
  capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } };
  contributes: {
    configurationDefaults: Record<string, unknown>;
    configuration: { properties: Record<string, { scope?: string }> };
    views: Record<string, Array<{ id: string; name: string }>>;
    walkthroughs: Array<{ id: string; title: string; steps: Step[] }>;
    commands: Array<{ command: string; title?: string; category?: string }>;
  };
};

describe('package.json', () => {
  it('has the version the containers are told (EXTENSION_VERSION, TOOLBOX_VSCODE_VERSION)', () => {
    assert.equal(pkg.version, EXTENSION_VERSION);
  });

  it("keeps VS Code's git to the folder's own repository by default (docs/decisions/0059)", () => {
    for (const [setting, value] of Object.entries(VSCODE_GIT_DEFAULTS)) {
      assert.equal(pkg.contributes.configurationDefaults[setting], value, setting);
    }
  });

  it('applies toolbox.dockerHost from User settings in a remote window too (scope window, docs/decisions/0015)', () => {
    const setting = pkg.contributes.configuration.properties[SETTINGS.dockerHost];
    assert.ok(setting, 'the setting is contributed under the contract name');
    // VS Code applies local User settings in a remote window only for the scopes application,
    // window, resource and language-overridable; machine and machine-overridable are left out.
    assert.equal(setting.scope, 'window');
  });

  it('ignores a workspace value of toolbox.dockerHost until the workspace is trusted (a repository must not pick the engine)', () => {
    assert.ok(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations.includes(SETTINGS.dockerHost));
  });

  it('keeps toolbox.turnedOffForFolder where a workspace cannot set it (scope machine, docs/decisions/0041)', () => {
    const setting = pkg.contributes.configuration.properties[SETTINGS.turnedOffForFolder] as { scope?: string; type?: string };
    assert.ok(setting, 'the setting is contributed under the contract name');
    assert.equal(setting.type, 'object');
    assert.equal(setting.scope, 'machine');
  });

  it("offers toolbox.seccomp as upstream's unconfined by default, per folder, ignored from an untrusted workspace (docs/decisions/0024)", () => {
    const setting = pkg.contributes.configuration.properties[SETTINGS.seccomp] as { scope?: string; default?: unknown; enum?: unknown };
    assert.ok(setting, 'the setting is contributed under the contract name');
    assert.equal(setting.default, 'unconfined');
    assert.deepEqual(setting.enum, [...SECCOMP_PROFILES]);
    assert.equal(setting.scope, 'resource');
    assert.ok(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations.includes(SETTINGS.seccomp));
  });

  it('lists the commands messages name under the labels they name (COMMAND_LABELS)', () => {
    for (const entry of Object.values(COMMAND_LABELS)) {
      const { command } = entry;
      const c = pkg.contributes.commands.find((x) => x.command === command);
      // An entry without a label is a command the UI runs itself, which package.json does not list.
      if (!('label' in entry)) {
        assert.equal(c, undefined, `${command} has no label, so package.json does not list it`);
        continue;
      }
      assert.ok(c, command);
      assert.equal(c.category ? `${c.category}: ${c.title}` : c.title, entry.label);
    }
  });

  it('names every view in title case ("Proximo", not "proximo")', () => {
    for (const view of pkg.contributes.views.toolbox!) assert.match(view.name, /^[A-Z]/, `${view.id}: "${view.name}"`);
    assert.equal(pkg.contributes.views.toolbox!.find((v) => v.id === 'toolbox.proximo')?.name, 'Proximo');
  });

  it('has a Getting started walkthrough: engine found, first shell, peer messaging, where settings live', () => {
    const walk = pkg.contributes.walkthroughs.find((w) => w.id === WALKTHROUGH_ID);
    assert.ok(walk);
    assert.deepEqual(
      walk.steps.map((s) => s.id),
      ['engine', 'shell', 'peer', 'config'],
    );
    const [engine, shell] = walk.steps;
    assert.deepEqual(engine!.completionEvents, [`onContext:${CONTEXT_KEYS.engineReachable}`]);
    assert.deepEqual(shell!.completionEvents, ['onCommand:toolbox.openShell']);
    for (const step of walk.steps) {
      const md = step.media.markdown;
      assert.ok(md && existsSync(join(root, md)), `${step.id}: its markdown ${md} ships with the extension`);
      assert.match(md, /^extension\/media\//, 'under extension/media, which .vscodeignore ships');
      assert.doesNotMatch(step.description, /`/, `${step.id}: no literal backticks in the step text`);
      for (const [, cmd] of step.description.matchAll(/\(command:([\w.]+)/g)) {
        const known = pkg.contributes.commands.some((c) => c.command === cmd) || /^workbench\./.test(cmd!);
        assert.ok(known, `${step.id}: its button runs ${cmd}, a command that exists`);
      }
    }
  });
});
