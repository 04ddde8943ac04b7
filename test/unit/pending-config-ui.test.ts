/**
 * The notification about what a project config asks beyond the user's own (ui/config/pendingConfigPrompt.ts,
 * docs/decisions/0041): it names keys and never a value from the file, Review… shows the lines
 * in a read-only document, Approve stores the consent for exactly that change, Keep Refused is
 * not asked again in this window. Against the stand-in vscode module.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PendingProjectConfig } from '../../extension/src/backend/api';
import { installVscodeLite, silentLog, vscodeLite } from '../support/vscodeLite';

const PENDING: PendingProjectConfig = {
  folder: '/home/u/proj',
  hash: 'c'.repeat(64),
  sources: ['.toolbox.yaml'],
  keys: ['image', 'inherit_host_auth', 'mounts'],
  items: [
    'image: "[x](command:workbench.action.terminal.sendSequence)" instead of "user/img:1"',
    'mounts: adds "hostroot": "/" at "/host", read-write',
  ],
};

interface Ui {
  asked: string[];
  opened: string[];
  answers: Array<string | undefined>;
}

/** The stand-in window and workspace the prompt talks to, answering from `answers` in turn. */
function stubUi(answers: Array<string | undefined>): Ui & { provider: () => { provideTextDocumentContent(u: unknown): string } } {
  installVscodeLite();
  const ui = { asked: [] as string[], opened: [] as string[], answers };
  let provider: { provideTextDocumentContent(u: unknown): string } | undefined;
  const lite = vscodeLite as unknown as Record<string, Record<string, unknown>>;
  lite.window!.showWarningMessage = async (message: string) => {
    ui.asked.push(message);
    return ui.answers.shift();
  };
  lite.window!.showInformationMessage = async () => undefined;
  lite.window!.showTextDocument = async () => undefined;
  lite.workspace!.registerTextDocumentContentProvider = (_scheme: string, p: typeof provider) => {
    provider = p;
    return { dispose: () => undefined };
  };
  lite.workspace!.openTextDocument = async (uri: { toString(): string }) => void ui.opened.push(provider!.provideTextDocumentContent(uri));
  lite.Uri!.from = (parts: { scheme: string; path: string; query: string }) => ({
    toString: () => `${parts.scheme}:${parts.path}?${parts.query}`,
  });
  return Object.assign(ui, { provider: () => provider! });
}

const settle = () => new Promise((r) => setTimeout(r, 10));

describe('PendingConfigPrompt', () => {
  it('names the keys, never a value from the file', async () => {
    installVscodeLite();
    const { pendingMessage } = await import('../../extension/src/ui/config/pendingConfigPrompt');
    const text = pendingMessage(PENDING);
    assert.equal(
      text,
      "The project's .toolbox.yaml asks for more than your own config gives: image, inherit_host_auth, mounts. It was left out of this container; Review… shows what it would add.",
    );
    assert.doesNotMatch(text, /command:|hostroot/);
    assert.match(
      pendingMessage({ sources: ['.toolbox.yaml', '.vscode/settings.json'], keys: ['peer_messaging'] }),
      /and \.vscode\/settings\.json ask for more/,
    );
  });

  it('Review… shows the lines as plain text, then Approve stores the consent for exactly that change', async () => {
    const ui = stubUi(['Review…', 'Approve for This Folder']);
    const { PendingConfigPrompt } = await import('../../extension/src/ui/config/pendingConfigPrompt');
    const approved: Array<[string, string]> = [];
    const prompt = new PendingConfigPrompt({ approveProjectConfig: async (f, h) => void approved.push([f, h]) }, silentLog as never);
    prompt.offer(PENDING);
    await settle();
    assert.equal(ui.asked.length, 2);
    assert.equal(ui.opened.length, 1);
    assert.ok(ui.opened[0]!.includes(`+ ${PENDING.items[0]}`), ui.opened[0]);
    assert.ok(ui.opened[0]!.startsWith('What the project configuration of /home/u/proj asks beyond your own config'));
    assert.deepEqual(approved, [[PENDING.folder, PENDING.hash]]);
    prompt.dispose();
  });

  it('Keep Refused is not asked again in this window; a dismissed one is', async () => {
    const ui = stubUi(['Keep Refused']);
    const { PendingConfigPrompt } = await import('../../extension/src/ui/config/pendingConfigPrompt');
    const approved: string[] = [];
    const prompt = new PendingConfigPrompt({ approveProjectConfig: async (f) => void approved.push(f) }, silentLog as never);
    prompt.offer(PENDING);
    await settle();
    prompt.offer(PENDING);
    await settle();
    assert.equal(ui.asked.length, 1);
    ui.answers.push(undefined);
    const other = { ...PENDING, hash: 'd'.repeat(64) };
    prompt.offer(other);
    await settle();
    prompt.offer(other);
    await settle();
    assert.equal(ui.asked.length, 3, 'a changed widening is asked about; a dismissed one again');
    assert.deepEqual(approved, []);
    prompt.dispose();
  });
});
