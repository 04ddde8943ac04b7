/**
 * Issue 30 in the editor: the egress policy's connection question in words (plain, whatever the
 * container named), the prompter on the stand-in vscode module (the notification's buttons, Allow
 * for This Folder writing exactly the rule into the User settings before the connection goes on,
 * deny on an abort, a dismissal or a closing window), the network row and the latest connections
 * in the Workspaces view, the connection log's document, the package.json entries, and the lazy
 * backend that listens without loading.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { EgressChoice, EgressLogEntry, EgressQuestion, EgressSummary, LoadedBackend } from '../../extension/src/backend/api';
import { COMMAND_LABELS, SETTINGS } from '../../extension/src/contract/manifest';
import { EgressInbox, settingWithAllow } from '../../extension/src/ui/egress/egressInbox';
import {
  byteSize,
  destination,
  egressLogDocument,
  egressLogLine,
  egressMessage,
  egressPickItem,
  egressStatus,
  logTime,
} from '../../extension/src/ui/egress/egressText';
import { lazyBackend } from '../../extension/src/ui/lazyBackend';
import { containerDescription } from '../../extension/src/ui/views/treeItems';
import { workspacesNodes, type TreeNode } from '../../extension/src/ui/views/treeNodes';
import type { ToolboxState } from '../../extension/src/ui/views/refreshManager';
import { objectNames } from '../../extension/src/contract/objects';
import { containerSummary, viewState } from '../support/summary';
import { installVscodeLite, vscodeLite } from '../support/vscodeLite';

const now = Date.UTC(2026, 11, 3, 12, 0, 0);

function question(over: Partial<EgressQuestion> = {}): EgressQuestion {
  return { id: 'e1', container: 'toolbox-app-1234abcd', folder: '/src/app', host: 'api.example.com', port: 443, ...over };
}

/** A host name a container chose to fool the user: a line break, a link, an icon, a look-alike of our words. */
const HOSTILE_HOST = 'evil.example\nToolbox: [Allow](command:toolbox.x) $(check) safe';

describe('the question in words', () => {
  it('says which container of which folder wants which host:port', () => {
    assert.equal(egressMessage(question()), 'toolbox-app-1234abcd (folder app) wants to connect to api.example.com:443');
  });

  it('writes an IPv6 literal as [addr]:port, once', () => {
    assert.equal(destination('fd00::1', 8080), '[fd00::1]:8080');
    assert.equal(destination('[fd00::1]', 8080), '[fd00::1]:8080');
    assert.equal(destination('127.0.0.1', 80), '127.0.0.1:80');
    assert.equal(egressMessage(question({ host: '::1', port: 3000 })), 'toolbox-app-1234abcd (folder app) wants to connect to [::1]:3000');
  });

  it('shows a hostile host name as text: one line, no link, $( as written in a notification and escaped where icons are drawn', () => {
    const message = egressMessage(question({ host: HOSTILE_HOST }));
    assert.equal(
      message,
      'toolbox-app-1234abcd (folder app) wants to connect to [evil.example Toolbox: [Allow] (command:toolbox.x) $(check) safe]:443',
    );
    assert.ok(!message.includes('\n') && !message.includes(']('));
    const pick = egressPickItem(question({ host: HOSTILE_HOST, folder: '/src/$(alert)\n[x](command:y)' }));
    assert.equal(pick.label, '[evil.example Toolbox: [Allow] (command:toolbox.x) \\$(check) safe]:443');
    assert.equal(pick.detail, 'Folder: /src/\\$(alert) [x] (command:y)');
    const status = egressStatus([question({ host: HOSTILE_HOST })])!;
    assert.equal(status.text, '$(globe) 1');
    assert.deepEqual(status.tooltip.split('\n'), [
      '1 connection question waiting (each connection is held until you answer):',
      '• toolbox-app-1234abcd (folder app) wants to connect to [evil.example Toolbox: [Allow] (command:toolbox.x) $(check) safe]:443',
      '',
      'Click to answer.',
    ]);
    assert.equal(egressStatus([]), undefined);
  });
});

describe("toolbox.egressForFolder's new value (settingWithAllow)", () => {
  it('adds host:port to the folder\'s "allow", keeping its mode, its other rules and every other folder', () => {
    const current = {
      '/src/other': { mode: 'allowlist', allow: ['x.example:443'] },
      '/src/app': { mode: 'ask', allow: ['registry.example:443'] },
    };
    const { value, unchanged } = settingWithAllow(current, '/src/app', 'api.example.com:443');
    assert.equal(unchanged, false);
    assert.deepEqual(value, {
      '/src/other': { mode: 'allowlist', allow: ['x.example:443'] },
      '/src/app': { mode: 'ask', allow: ['registry.example:443', 'api.example.com:443'] },
    });
    assert.deepEqual(current['/src/app'].allow, ['registry.example:443'], 'the value read is not changed in place');
  });

  it('makes the entry when the setting or the folder has none, under the folder path as the policy reads it', () => {
    assert.deepEqual(settingWithAllow(undefined, '/src/app/', '[fd00::1]:80').value, { '/src/app': { allow: ['[fd00::1]:80'] } });
    assert.deepEqual(settingWithAllow({ '/src/app': { mode: 'ask' } }, '/src/app', 'a.example:1').value, {
      '/src/app': { mode: 'ask', allow: ['a.example:1'] },
    });
  });

  it('adds no duplicate', () => {
    const current = { '/src/app': { allow: ['API.example.com:443'] } };
    const { value, unchanged } = settingWithAllow(current, '/src/app', 'api.example.com:443');
    assert.equal(unchanged, true);
    assert.deepEqual(value, current);
  });

  it('refuses to replace a value that is not what the schema says', () => {
    assert.throws(() => settingWithAllow(['x'], '/src/app', 'a:1'), /not an object/);
    assert.throws(() => settingWithAllow({ '/src/app': 'ask' }, '/src/app', 'a:1'), /entry for \/src\/app .* not an object/);
    assert.throws(() => settingWithAllow({ '/src/app': { allow: 'a:1' } }, '/src/app', 'a:1'), /not a list/);
  });
});

describe('the inbox (ui/egress/egressInbox.ts)', () => {
  it('an abort, the inbox closing, a duplicate or an aborted signal is a deny; the first answer wins', async () => {
    const inbox = new EgressInbox();
    const gaveUp = new AbortController();
    const first = inbox.ask(question(), gaveUp.signal);
    assert.equal(inbox.size, 1);
    assert.equal(await inbox.ask(question(), new AbortController().signal), 'deny', 'the same id again');
    gaveUp.abort();
    assert.equal(await first, 'deny');
    assert.equal(inbox.size, 0);
    assert.equal(inbox.answer('e1', 'once'), false, 'a late answer changes nothing');
    assert.match(inbox.howLeft('e1') ?? '', /gave up/);

    const aborted = new AbortController();
    aborted.abort();
    assert.equal(await inbox.ask(question({ id: 'e2' }), aborted.signal), 'deny');

    const second = inbox.ask(question({ id: 'e3' }), new AbortController().signal);
    assert.equal(inbox.answer('e3', 'once'), true);
    assert.equal(inbox.answer('e3', 'deny'), false);
    assert.equal(await second, 'once');

    const waiting = inbox.ask(question({ id: 'e4' }), new AbortController().signal);
    inbox.dispose();
    assert.equal(await waiting, 'deny');
    assert.equal(await inbox.ask(question({ id: 'e5' }), new AbortController().signal), 'deny', 'closed');
  });

  it('denies by itself when the backend never lets go, after its own limit and a grace', async () => {
    const timers: Array<{ fn: () => void; ms: number }> = [];
    const inbox = new EgressInbox({ timers: { set: (fn, ms) => timers.push({ fn, ms }), clear: () => undefined } });
    const answer = inbox.ask(question(), new AbortController().signal);
    assert.equal(timers[0]!.ms, 125_000);
    timers[0]!.fn();
    assert.equal(await answer, 'deny');
  });
});

describe('the Workspaces view', () => {
  const summary: EgressSummary = { mode: 'ask', enforced: true, served: true, allowed: 2, denied: 1, asking: 0 };
  const entry = (over: Partial<EgressLogEntry>): EgressLogEntry => ({
    at: now - 60_000,
    host: 'api.example.com',
    port: 443,
    via: 'connect',
    verdict: 'allowed',
    reason: 'api.example.com:443 (folder)',
    address: '93.184.216.34',
    bytesUp: 1_200,
    bytesDown: 11_400,
    endedAt: now - 50_000,
    ...over,
  });
  const log: EgressLogEntry[] = [
    entry({}),
    entry({
      at: now - 40_000,
      host: 'evil.example',
      verdict: 'denied',
      reason: 'evil.example:443 is not allowed by the egress policy',
      address: undefined,
      bytesUp: 0,
      bytesDown: 0,
    }),
    entry({ at: now - 30_000, host: 'fd00::1', port: 8080, endedAt: undefined, bytesUp: 10, bytesDown: 500 }),
  ];
  const state = (egress: EgressSummary | undefined): ToolboxState =>
    viewState([containerSummary({ egress })], {
      takenAt: now,
      snapshot: { anchor: { name: 'toolbox-peer-anchor', state: 'running' }, volume: { name: 'toolbox-cc-socks', exists: true } },
    });
  const networkRow = (nodes: TreeNode[]) => nodes[0]?.children?.find((n) => n.id.startsWith('egress:') && n.id.split(':').length === 2);

  it('says the mode on a network row, lists the latest connections newest first under it, and counts the denied on the container', () => {
    const nodes = workspacesNodes(state(summary), ['/src/app'], '', [], now, { egressLog: () => log });
    assert.equal(nodes[0]!.description, 'running · peer on · 1 denied');
    const row = networkRow(nodes)!;
    assert.equal(row.label, "Network: ask — through this window's proxy");
    assert.equal(row.description, '2 allowed · 1 denied');
    assert.equal(row.contextValue, 'egress.ask.enforced.served');
    assert.equal(row.egressContainer, 'toolbox-app-1234abcd');
    assert.equal(row.collapsed, true);
    assert.deepEqual(
      row.children!.map((n) => [n.label, n.description, n.contextValue]),
      [
        ['✓ [fd00::1]:8080', '510 B · open', 'egressEntry.allowed'],
        ['✗ evil.example:443', 'denied', 'egressEntry.denied'],
        ['✓ api.example.com:443', '12.3 KB', 'egressEntry.allowed'],
      ],
    );
    const denied = row.children![1]!.tooltip!.split('\n');
    assert.deepEqual(denied, [
      'Denied: evil.example:443 (HTTP CONNECT)',
      'Reason: evil.example:443 is not allowed by the egress policy',
      `Asked at ${logTime(now - 40_000)}, ended at ${logTime(now - 50_000)}.`,
    ]);
    assert.match(row.children![2]!.tooltip!, /^Address: 93\.184\.216\.34$/m);
    assert.match(row.children![2]!.tooltip!, /^Sent 1\.2 KB, received 11\.1 KB\.$/m);
    // Next to what it can reach on this host: before that group.
    const ids = nodes[0]!.children!.map((n) => n.id);
    if (ids.includes('reach:toolbox-app-1234abcd')) assert.ok(ids.indexOf(row.id) < ids.indexOf('reach:toolbox-app-1234abcd'));
  });

  it('lists the newest 20, then a row that opens the whole log', () => {
    const many = Array.from({ length: 25 }, (_, i) => entry({ at: now - 100_000 + i, port: 1000 + i }));
    const row = networkRow(workspacesNodes(state(summary), ['/src/app'], '', [], now, { egressLog: () => many }))!;
    assert.equal(row.children!.length, 21);
    assert.equal(row.children![0]!.label, '✓ api.example.com:1024');
    assert.equal(row.children![19]!.label, '✓ api.example.com:1005');
    const more = row.children![20]!;
    assert.equal(more.label, '5 earlier connections');
    assert.equal(more.command, COMMAND_LABELS.showEgressLog.command);
    assert.deepEqual(more.commandArgs, ['toolbox-app-1234abcd']);
    assert.equal(new Set(row.children!.map((n) => n.id)).size, 21, 'unique ids');
  });

  it('gives connections that share a time and destination their own ids', () => {
    const twins = [entry({}), entry({})];
    const row = networkRow(workspacesNodes(state(summary), ['/src/app'], '', [], now, { egressLog: () => twins }))!;
    assert.equal(new Set(row.children!.map((n) => n.id)).size, 2);
  });

  it('says when the policy is not applied yet, when another window serves it, and when it is open', () => {
    const unenforced = networkRow(workspacesNodes(state({ ...summary, enforced: false, served: false }), ['/src/app'], '', [], now))!;
    assert.equal(unenforced.label, 'Network: open (created before the policy; reopen to apply)');
    assert.equal(unenforced.description, "folder's mode: ask");
    assert.equal(unenforced.children, undefined);
    const elsewhere = networkRow(workspacesNodes(state({ ...summary, mode: 'allowlist', served: false }), ['/src/app'], '', [], now))!;
    assert.equal(elsewhere.label, 'Network: allowlist — not served by this window');
    const open = networkRow(workspacesNodes(state({ ...summary, mode: 'open', enforced: false }), ['/src/app'], '', [], now))!;
    assert.equal(open.label, 'Network: open — anywhere');
  });

  it('keeps a container without an egress summary as it was: no network row, no count', () => {
    const nodes = workspacesNodes(state(undefined), ['/src/app'], '', [], now, { egressLog: () => log });
    assert.equal(networkRow(nodes), undefined);
    assert.equal(nodes[0]!.description, 'running · peer on');
    assert.equal(
      containerDescription({ container: containerSummary({ egress: { ...summary, denied: 0 } }), inThisWindow: true }),
      'running · peer on',
    );
  });
});

describe("the connection log's document", () => {
  it('one line per connection: time, verdict, host:port, address, bytes up and down, reason', () => {
    const entries: EgressLogEntry[] = [
      {
        at: now,
        host: 'api.example.com',
        port: 443,
        via: 'connect',
        verdict: 'allowed',
        reason: 'api.example.com:443 (folder)',
        address: '93.184.216.34',
        bytesUp: 1_200,
        bytesDown: 12_600,
        endedAt: now + 1000,
      },
      {
        at: now + 2000,
        host: HOSTILE_HOST,
        port: 443,
        via: 'http',
        verdict: 'denied',
        reason: 'denied in VS Code\n[Run](command:x)',
        bytesUp: 0,
        bytesDown: 0,
        endedAt: now + 2000,
      },
    ];
    const doc = egressLogDocument('toolbox-app-1234abcd', entries, now + 5000);
    assert.deepEqual(doc.split('\n'), [
      "Connections of toolbox-app-1234abcd through this window's egress proxy, oldest first.",
      `2 connections (1 allowed, 1 denied); as of ${logTime(now + 5000)}.`,
      'Columns: time, verdict, host:port, address connected to, bytes up and down, reason.',
      '',
      `${logTime(now)}  allowed  api.example.com:443  93.184.216.34  up 1.2 KB down 12.3 KB  api.example.com:443 (folder)`,
      `${logTime(now + 2000)}  denied   [evil.example Toolbox: [Allow] (command:toolbox.x) $(check) safe]:443  -  up 0 B down 0 B  denied in VS Code [Run] (command:x)`,
      '',
    ]);
    assert.equal(egressLogLine({ ...entries[0]!, endedAt: undefined }).includes('down 12.3 KB (open)'), true);
    assert.match(egressLogDocument('c', [], now), /^No connection yet in this window\.$/m);
    assert.match(logTime(now), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });

  it('writes sizes as a person reads them', () => {
    assert.deepEqual([0, 512, 1024, 12_600, 4 * 1024 * 1024].map(byteSize), ['0 B', '512 B', '1.0 KB', '12.3 KB', '4.0 MB']);
  });
});

describe('the lazy backend', () => {
  it('listens to the egress log without loading the backend, and hands the listener over when it loads', () => {
    let loads = 0;
    let fire: ((container: string) => void) | undefined;
    const real = {
      onDidChangeEgress: (listener: (container: string) => void) => {
        fire = listener;
        return { dispose: () => undefined };
      },
      egressLog: () => [{ host: 'x' }],
      snapshot: async () => 'snap',
    } as unknown as LoadedBackend;
    const backend = lazyBackend(objectNames('t'), () => (loads++, real));
    const heard: string[] = [];
    const subscription = backend.onDidChangeEgress((c) => heard.push(c));
    assert.deepEqual(backend.egressLog('c'), [], 'no log before the backend loads');
    assert.equal(loads, 0);
    void backend.snapshot();
    assert.equal(loads, 1);
    fire!('toolbox-app');
    assert.deepEqual(heard, ['toolbox-app']);
    assert.equal(backend.egressLog('c').length, 1);
    subscription.dispose();
    fire!('again');
    assert.deepEqual(heard, ['toolbox-app']);
  });
});

describe('package.json', () => {
  const pkg = JSON.parse(readFileSync(join(__dirname, '../../../package.json'), 'utf8')) as {
    contributes: {
      commands: Array<{ command: string; title: string; category?: string }>;
      menus: Record<string, Array<{ command: string; when?: string; group?: string }>>;
    };
  };
  const holds = (when: string, viewItem: string) => {
    if (!when.includes('view == toolbox.workspaces')) return false;
    const re = /viewItem =~ \/(.+)\/$/.exec(when);
    return re ? new RegExp(re[1]!).test(viewItem) : false;
  };

  it('contributes the two commands in the palette, under the Toolbox category', () => {
    const hidden = pkg.contributes.menus.commandPalette!.filter((m) => m.when === 'false').map((m) => m.command);
    for (const [id, title] of [
      ['toolbox.showEgressQuestions', 'Show Connection Questions…'],
      [COMMAND_LABELS.showEgressLog.command, 'Open Connection Log'],
    ] as const) {
      const c = pkg.contributes.commands.find((x) => x.command === id);
      assert.equal(c?.title, title);
      assert.equal(c?.category, 'Toolbox');
      assert.ok(!hidden.includes(id));
    }
  });

  it('offers Open Connection Log on the network row (inline too) and its connections, nowhere else', () => {
    const menu = pkg.contributes.menus['view/item/context']!.filter((m) => m.command === COMMAND_LABELS.showEgressLog.command);
    for (const item of [
      'egress.ask.enforced.served',
      'egress.allowlist.enforced',
      'egress.ask.unenforced',
      'egressEntry.denied',
      'egressMore',
    ]) {
      assert.ok(
        menu.some((m) => holds(m.when!, item)),
        item,
      );
    }
    assert.ok(menu.some((m) => m.group?.startsWith('inline') && holds(m.when!, 'egress.ask.enforced.served')));
    for (const item of ['container.running.peer.window', 'reachGroup', 'protection.on'])
      assert.ok(!menu.some((m) => holds(m.when!, item)), item);
  });
});

describe('the prompter (ui/egress/egressQuestions.ts) on the stand-in vscode', () => {
  installVscodeLite();
  type Shown = { message: string; buttons: string[]; answer: (choice: string | undefined) => void };
  const warnings: Shown[] = [];
  const errors: string[] = [];
  const statusMessages: string[] = [];
  const picks: Array<{ items: Array<{ label: string; choice?: EgressChoice; id?: string }>; resolve: (i: unknown) => void }> = [];
  const writes: Array<{ key: string; value: unknown; target: unknown }> = [];
  let userValue: unknown;
  let failWrite: Error | undefined;
  const lite = vscodeLite as unknown as { window: Record<string, unknown>; workspace: Record<string, unknown> };
  lite.window.showWarningMessage = (message: string, ...buttons: string[]) =>
    new Promise<string | undefined>((resolve) => warnings.push({ message, buttons, answer: resolve }));
  lite.window.showErrorMessage = async (message: string) => {
    errors.push(message);
    return undefined;
  };
  lite.window.showInformationMessage = async () => undefined;
  lite.window.setStatusBarMessage = (message: string) => {
    statusMessages.push(message);
    return { dispose: () => undefined };
  };
  lite.window.showQuickPick = (items: Array<{ label: string }>) => new Promise((resolve) => picks.push({ items, resolve }));
  lite.workspace.getConfiguration = () => ({
    get: <T>(_k: string, fallback?: T) => fallback,
    inspect: (key: string) => (key === SETTINGS.egressForFolder ? { key, globalValue: userValue } : undefined),
    update: async (key: string, value: unknown, target: unknown) => {
      if (failWrite) throw failWrite;
      writes.push({ key, value, target });
      userValue = value;
    },
  });
  // Required after the stand-in is installed (ui/egress/egressQuestions.ts imports vscode).
  const { EgressQuestions, EGRESS_BUTTONS, EGRESS_ALREADY_ANSWERED } =
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require('../../extension/src/ui/egress/egressQuestions') as typeof import('../../extension/src/ui/egress/egressQuestions');
  const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  const prompter = () => {
    const inbox = new EgressInbox();
    return { inbox, p: new EgressQuestions(inbox, log) };
  };
  const reset = () => {
    warnings.length = 0;
    errors.length = 0;
    statusMessages.length = 0;
    picks.length = 0;
    writes.length = 0;
    failWrite = undefined;
  };

  it('shows a warning with Allow Once, Allow for This Folder and Deny; Allow Once answers once', async () => {
    reset();
    const { inbox, p } = prompter();
    const answer = p.ask(question(), new AbortController().signal);
    await tick();
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!.message, 'toolbox-app-1234abcd (folder app) wants to connect to api.example.com:443');
    assert.deepEqual(warnings[0]!.buttons, ['Allow Once', 'Allow for This Folder', 'Deny']);
    assert.equal(inbox.size, 1);
    warnings[0]!.answer(EGRESS_BUTTONS.once);
    assert.equal(await answer, 'once');
    assert.equal(writes.length, 0, 'Allow Once writes nothing');
  });

  it('shows a hostile host name as text in the notification', async () => {
    reset();
    const { p } = prompter();
    const answer = p.ask(question({ host: HOSTILE_HOST }), new AbortController().signal);
    await tick();
    assert.equal(
      warnings[0]!.message,
      'toolbox-app-1234abcd (folder app) wants to connect to [evil.example Toolbox: [Allow] (command:toolbox.x) $(check) safe]:443',
    );
    warnings[0]!.answer(EGRESS_BUTTONS.deny);
    assert.equal(await answer, 'deny');
  });

  it('Allow for This Folder writes exactly the rule into the User settings, keeping the rest, before the connection goes on', async () => {
    reset();
    userValue = { '/src/other': { mode: 'allowlist', allow: ['x.example:443'] }, '/src/app': { mode: 'ask', allow: ['a.example:80'] } };
    const { p } = prompter();
    let resolvedAt = -1;
    const answer = p.ask(question({ host: 'fd00::1', port: 8443 }), new AbortController().signal).then((c) => {
      resolvedAt = writes.length;
      return c;
    });
    await tick();
    warnings[0]!.answer(EGRESS_BUTTONS.folder);
    assert.equal(await answer, 'folder');
    assert.equal(resolvedAt, 1, 'the rule was written before the answer went back');
    assert.deepEqual(writes, [
      {
        key: SETTINGS.egressForFolder,
        value: {
          '/src/other': { mode: 'allowlist', allow: ['x.example:443'] },
          '/src/app': { mode: 'ask', allow: ['a.example:80', '[fd00::1]:8443'] },
        },
        target: vscodeLite.ConfigurationTarget.Global,
      },
    ]);
    // The same rule again: nothing written, still allowed for the folder.
    const again = p.ask(question({ id: 'e2', host: 'fd00::1', port: 8443 }), new AbortController().signal);
    await tick();
    warnings[1]!.answer(EGRESS_BUTTONS.folder);
    assert.equal(await again, 'folder');
    assert.equal(writes.length, 1);
  });

  it('a failed write shows the error and allows once', async () => {
    reset();
    userValue = undefined;
    failWrite = new Error('Unable to write into user settings');
    const { p } = prompter();
    const answer = p.ask(question(), new AbortController().signal);
    await tick();
    warnings[0]!.answer(EGRESS_BUTTONS.folder);
    assert.equal(await answer, 'once');
    assert.equal(errors.length, 1);
    assert.match(errors[0]!, /^Could not add api\.example\.com:443 to toolbox\.egressForFolder .*allowed once: Unable to write/);
  });

  it('the signal aborting denies and the question leaves; a late click says so in the status bar', async () => {
    reset();
    const { inbox, p } = prompter();
    const gaveUp = new AbortController();
    const answer = p.ask(question(), gaveUp.signal);
    await tick();
    gaveUp.abort();
    assert.equal(await answer, 'deny');
    assert.equal(inbox.size, 0);
    warnings[0]!.answer(EGRESS_BUTTONS.folder);
    await tick();
    assert.equal(writes.length, 0, 'nothing written for a question that left');
    assert.equal(statusMessages.at(-1), `${EGRESS_ALREADY_ANSWERED}: the connection gave up or its time ran out (denied)`);
  });

  it('closing the notification denies; the window closing denies', async () => {
    reset();
    const { inbox, p } = prompter();
    const dismissed = p.ask(question(), new AbortController().signal);
    await tick();
    warnings[0]!.answer(undefined);
    assert.equal(await dismissed, 'deny');
    const waiting = p.ask(question({ id: 'e2' }), new AbortController().signal);
    await tick();
    inbox.dispose();
    assert.equal(await waiting, 'deny');
  });

  it('Show Connection Questions… picks a waiting question, then the answer, while its notification stays unanswered', async () => {
    reset();
    userValue = undefined;
    const { inbox, p } = prompter();
    const first = p.ask(question(), new AbortController().signal);
    const second = p.ask(question({ id: 'e2', host: 'b.example', port: 80 }), new AbortController().signal);
    await tick();
    const shown = p.showQuestions();
    await tick();
    assert.deepEqual(
      picks[0]!.items.map((i) => i.label),
      ['api.example.com:443', 'b.example:80'],
    );
    picks[0]!.resolve(picks[0]!.items[1]);
    await tick();
    assert.deepEqual(
      picks[1]!.items.map((i) => i.choice),
      ['once', 'folder', 'deny'],
    );
    picks[1]!.resolve(picks[1]!.items[1]);
    await shown;
    assert.equal(await second, 'folder');
    assert.deepEqual(userValue, { '/src/app': { allow: ['b.example:80'] } });
    assert.equal(inbox.size, 1);
    // The second's notification, clicked late, changes nothing.
    warnings[1]!.answer(EGRESS_BUTTONS.deny);
    await tick();
    assert.equal(statusMessages.at(-1), `${EGRESS_ALREADY_ANSWERED}: allowed for the folder`);
    warnings[0]!.answer(EGRESS_BUTTONS.deny);
    assert.equal(await first, 'deny');
  });
});
