/**
 * Host tools that run files of the folder (issue 38, item 5; docs/decisions/0060): the table of
 * known extensions (plan/hostTools.ts), what the posture says from a fake list of enabled
 * extensions and the window's trust, the row under "Can reach on this host" (ui/views/treeNodes.ts)
 * and the adapter that reads VS Code (backend/settings.ts hostTools).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  HOST_TOOLS,
  hostToolsChoice,
  hostToolsDetail,
  hostToolsOffer,
  hostToolsPosture,
  hostToolsSummary,
  MANAGE_TRUST_COMMAND,
  restrictedModeSupport,
  runningOnTheirOwn,
  type HostToolsFacts,
  type InstalledExtension,
} from '../../extension/src/plan/hostTools';
import { workspacesNodes, type TreeNode } from '../../extension/src/ui/views/treeNodes';
import { containerSummary, viewState } from '../support/summary';
import { installVscodeLite, vscodeLite } from '../support/vscodeLite';

const ESLINT: InstalledExtension = { id: 'dbaeumer.vscode-eslint', restricted: 'off' };
const PRETTIER: InstalledExtension = { id: 'esbenp.prettier-vscode', restricted: 'limited' };
const PYTHON: InstalledExtension = { id: 'ms-python.python', restricted: 'limited' };
const NPM: InstalledExtension = { id: 'vscode.npm', restricted: 'limited' };
const THEME: InstalledExtension = { id: 'someone.a-theme', restricted: 'full' };

const facts = (extensions: InstalledExtension[], over: Partial<HostToolsFacts> = {}): HostToolsFacts => ({
  trusted: true,
  trustEnabled: true,
  extensions,
  ...over,
});

describe('the known extensions (plan/hostTools.ts HOST_TOOLS)', () => {
  it('cover the ones the issue names, each once, by its lower-case id, saying what it runs and when', () => {
    const ids = HOST_TOOLS.map((t) => t.id);
    for (const id of [
      'dbaeumer.vscode-eslint',
      'esbenp.prettier-vscode',
      'ms-python.python',
      'ms-python.vscode-pylance',
      'ms-python.debugpy',
      'rust-lang.rust-analyzer',
      'vscjava.vscode-gradle',
      'vscjava.vscode-maven',
      'redhat.java',
      'orta.vscode-jest',
      'vitest.explorer',
      'golang.go',
      'ms-vscode.makefile-tools',
      'ms-vscode.cmake-tools',
      'vscode.npm',
      'vscode.typescript-language-features',
    ]) {
      assert.ok(ids.includes(id), id);
    }
    assert.equal(new Set(ids).size, ids.length, 'no id twice');
    assert.equal(new Set(HOST_TOOLS.map((t) => t.name)).size, ids.length, 'no name twice');
    for (const t of HOST_TOOLS) {
      assert.match(t.id, /^[a-z0-9-]+\.[a-z0-9-]+$/, t.id);
      assert.ok(t.runs.length > 30 && !t.runs.endsWith('.'), `${t.id}: ${t.runs}`);
      // Each says when: as the folder opens or files are edited (on its own), or when the user runs something.
      assert.match(t.runs, /as the folder opens|as you open|as it opens|when it formats|when you|once you pick|only when/, t.id);
    }
    // The ones that run on their own and the ones that wait for the user, as the words say.
    const when = (id: string) => HOST_TOOLS.find((t) => t.id === id)?.when;
    assert.equal(when('dbaeumer.vscode-eslint'), 'own');
    assert.equal(when('rust-lang.rust-analyzer'), 'own');
    assert.equal(when('vscode.npm'), 'ask');
    assert.equal(when('vscode.typescript-language-features'), 'ask');
  });

  it('read what an extension declares for Restricted Mode as VS Code does', () => {
    const caps = (supported: unknown) => ({ main: './out/extension', capabilities: { untrustedWorkspaces: { supported } } });
    assert.equal(restrictedModeSupport(caps(false)), 'off');
    assert.equal(restrictedModeSupport(caps('limited')), 'limited');
    assert.equal(restrictedModeSupport(caps(true)), 'full');
    // Undeclared: off for an extension with code, on for one without (a theme, a grammar).
    assert.equal(restrictedModeSupport({ main: './out/extension' }), 'off');
    assert.equal(restrictedModeSupport({ browser: './dist/web.js' }), 'off');
    assert.equal(restrictedModeSupport({ contributes: { themes: [] } }), 'full');
    assert.equal(restrictedModeSupport({ main: 'x', capabilities: { untrustedWorkspaces: { supported: 'yes' } } }), 'off');
    assert.equal(restrictedModeSupport(null), 'full');
  });
});

describe('the posture: which run the folder’s files, and what Restricted Mode does', () => {
  it('names the known ones a trusted window runs, those that wait for the user apart, and offers Workspace Trust', () => {
    const p = hostToolsPosture(facts([THEME, { ...ESLINT, id: 'DBaeumer.VSCode-ESLint' }, NPM, PYTHON]));
    assert.equal(p.state, 'trusted');
    assert.deepEqual(
      p.own.map((t) => [t.name, t.restricted]),
      [
        ['ESLint', 'off'],
        ['Python', 'limited'],
      ],
      'in the table order, matched without case; the theme is not one',
    );
    assert.deepEqual(
      p.ask.map((t) => t.name),
      ['npm (built in)'],
    );
    assert.equal(hostToolsSummary(p), "2 run this folder's files · trusted");
    const detail = hostToolsDetail(p);
    assert.match(
      detail,
      /^This window trusts the folder, so 2 installed extensions run files of the folder on this host, files an agent in the container can write: ESLint runs the folder's ESLint \(node_modules\) with its eslint\.config\.\* .* — off in Restricted Mode; Python runs the folder's interpreters \(\.venv\/bin\/python .* — limited in Restricted Mode, as it declares\. /,
    );
    assert.match(detail, / Only when you ask: npm \(built in\) runs the folder's package\.json scripts, only when you run one/);
    assert.match(detail, /\.vscode\/tasks\.json, which is read-only in the container\./);
    assert.match(detail, /Extensions Toolbox does not know may run its files too\.$/);
    const choice = hostToolsChoice(p)!;
    assert.match(
      choice,
      /^Your choice: while an agent works in the folder, you can open it in Restricted Mode \(Workspaces: Manage Workspace Trust, then Don't Trust\)\./,
    );
    assert.match(choice, /tasks, debugging, VS Code's git .* the project's \.toolbox\.yaml; trust the folder again/);
    assert.equal(hostToolsOffer(p), 'workspace-trust');
  });

  it('says nothing runs them on its own when only built-ins that wait for the user are there, and offers nothing', () => {
    const p = hostToolsPosture(facts([NPM, THEME]));
    assert.deepEqual(runningOnTheirOwn(p), []);
    assert.equal(hostToolsSummary(p), "none known runs this folder's files on its own");
    assert.match(
      hostToolsDetail(p),
      /^This window trusts the folder, and no installed extension Toolbox knows runs its files on its own\. Only when you ask: npm/,
    );
    assert.equal(hostToolsChoice(p), undefined);
    assert.equal(hostToolsOffer(p), undefined);
  });

  it('in Restricted Mode: the ones VS Code turned off are gone from the list, the limited ones leave the folder alone', () => {
    // VS Code does not run ESLint (it declares no support): vscode.extensions.all does not list it.
    const p = hostToolsPosture(facts([PRETTIER, PYTHON, NPM], { trusted: false }));
    assert.equal(p.state, 'restricted');
    assert.deepEqual(runningOnTheirOwn(p), []);
    assert.equal(hostToolsSummary(p), "Restricted Mode: none runs this folder's files");
    const detail = hostToolsDetail(p);
    assert.match(
      detail,
      /^This window is in Restricted Mode: VS Code does not start the extensions that need a trusted folder, and those that declare limited support leave the folder's code alone\. Limited now: Prettier, Python\. /,
    );
    assert.doesNotMatch(detail, /Only when you ask/);
    assert.equal(hostToolsChoice(p), undefined);
    assert.equal(hostToolsOffer(p), undefined);
  });

  it('in Restricted Mode, names one that declares it runs fully there, and says how to turn it off', () => {
    const p = hostToolsPosture(facts([{ ...ESLINT, restricted: 'full' }], { trusted: false }));
    assert.deepEqual(
      runningOnTheirOwn(p).map((t) => t.name),
      ['ESLint'],
    );
    assert.equal(hostToolsSummary(p), 'Restricted Mode: 1 still runs them');
    assert.match(
      hostToolsDetail(p),
      /Still running the folder's files on this host: ESLint runs .* — it declares it runs fully in Restricted Mode too\./,
    );
    assert.match(hostToolsChoice(p)!, /Disable \(Workspace\)/);
    assert.equal(hostToolsOffer(p), undefined, 'Workspace Trust cannot do more');
  });

  it('with Workspace Trust turned off, offers the setting that turns it on', () => {
    const p = hostToolsPosture(facts([ESLINT], { trustEnabled: false }));
    assert.equal(p.state, 'trust-off');
    assert.equal(hostToolsSummary(p), "1 runs this folder's files · Workspace Trust off");
    assert.match(
      hostToolsDetail(p),
      /^Workspace Trust is off \(security\.workspace\.trust\.enabled\): every folder is trusted, so 1 installed extension runs files/,
    );
    assert.match(hostToolsChoice(p)!, /^Your choice: turn security\.workspace\.trust\.enabled on in your User settings/);
    assert.equal(hostToolsOffer(p), 'trust-setting');
  });
});

describe('the Extensions on this host row under "Can reach on this host"', () => {
  const group = (hostTools: HostToolsFacts | undefined, folders = ['/src/app']): TreeNode => {
    const [node] = workspacesNodes(viewState([containerSummary({ reach: [] })]), folders, '/home/u', [], 0, {
      ...(hostTools !== undefined ? { hostTools } : {}),
    });
    const reach = (node!.id === 'otherContainers' ? node!.children![0]! : node!).children!.find(
      (n) => n.label === 'Can reach on this host',
    );
    assert.ok(reach);
    return reach;
  };

  it('follows the protected paths: the count, one row per extension, and Manage Workspace Trust, which opens VS Code’s editor', () => {
    const g = group(facts([ESLINT, PYTHON, NPM]));
    assert.deepEqual(
      g.children!.map((n) => n.label),
      ['Protected paths', 'Extensions on this host'],
    );
    const row = g.children![1]!;
    assert.equal(row.description, "2 run this folder's files · trusted");
    assert.equal(row.icon?.color, undefined, 'calm: the user’s choice, not a warning');
    assert.equal(row.contextValue, 'hostTools.trusted');
    assert.match(row.tooltip!, /ESLint runs the folder's ESLint/);
    assert.match(row.tooltip!, /\n\nYour choice: while an agent works/);
    assert.deepEqual(
      row.children!.map((n) => [n.label, n.description, n.command]),
      [
        ['ESLint', 'off in Restricted Mode', undefined],
        ['Python', 'limited in Restricted Mode, as it declares', undefined],
        ['Manage Workspace Trust', 'choose Restricted Mode while an agent works', MANAGE_TRUST_COMMAND],
      ],
    );
    assert.deepEqual(row.children![2]!.commandArgs, []);
    assert.match(row.children![0]!.tooltip!, /^ESLint \(dbaeumer\.vscode-eslint\) runs /);
  });

  it('in Restricted Mode says none runs them, with nothing to click; with Workspace Trust off offers its setting', () => {
    const restricted = group(facts([PRETTIER], { trusted: false })).children![1]!;
    assert.deepEqual(
      [restricted.description, restricted.icon?.id, restricted.children],
      ["Restricted Mode: none runs this folder's files", 'workspace-untrusted', undefined],
    );
    const off = group(facts([ESLINT], { trustEnabled: false })).children![1]!;
    const action = off.children!.at(-1)!;
    assert.deepEqual(
      [action.label, action.command, action.commandArgs],
      ['Open Setting', 'workbench.action.openSettings', ['security.workspace.trust.enabled']],
    );
  });

  it("is shown only under this window's containers, and only when the window's extensions were read", () => {
    assert.deepEqual(
      group(facts([ESLINT]), ['/elsewhere']).children!.map((n) => n.label),
      ['Protected paths'],
    );
    assert.deepEqual(
      group(undefined).children!.map((n) => n.label),
      ['Protected paths'],
    );
  });
});

describe('the adapter (backend/settings.ts hostTools)', () => {
  installVscodeLite();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { vscodeSettings } = require('../../extension/src/backend/settings') as typeof import('../../extension/src/backend/settings');

  it("reads the window's extensions with what each declares, the trust, and whether Workspace Trust is on", () => {
    const all = vscodeLite.extensions.all;
    const config = vscodeLite.workspace.getConfiguration;
    const trusted = vscodeLite.workspace.isTrusted;
    const asked: string[] = [];
    vscodeLite.extensions.all = [
      { id: 'dbaeumer.vscode-eslint', packageJSON: { main: 'x', capabilities: { untrustedWorkspaces: { supported: false } } } },
      { id: 'esbenp.prettier-vscode', packageJSON: { main: 'x', capabilities: { untrustedWorkspaces: { supported: 'limited' } } } },
    ];
    (vscodeLite.workspace as { getConfiguration: unknown }).getConfiguration = (section?: string) => ({
      get: <T>(k: string, d?: T) => {
        asked.push(`${section}.${k}`);
        return (section === 'security.workspace.trust' && k === 'enabled' ? false : d) as T;
      },
      inspect: () => undefined,
    });
    (vscodeLite.workspace as { isTrusted: boolean }).isTrusted = false;
    try {
      assert.deepEqual(vscodeSettings().hostTools(), {
        trusted: false,
        trustEnabled: false,
        extensions: [
          { id: 'dbaeumer.vscode-eslint', restricted: 'off' },
          { id: 'esbenp.prettier-vscode', restricted: 'limited' },
        ],
      });
      assert.deepEqual(asked, ['security.workspace.trust.enabled']);
    } finally {
      vscodeLite.extensions.all = all;
      (vscodeLite.workspace as { getConfiguration: unknown }).getConfiguration = config;
      (vscodeLite.workspace as { isTrusted: boolean }).isTrusted = trusted;
    }
  });
});
