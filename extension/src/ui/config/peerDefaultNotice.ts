/**
 * Says once when the `toolbox` CLI on PATH ships the other peer-messaging default and the user
 * set neither (docs/decisions/0018): the setting is part of the container name, so the CLI and
 * the editor would open two containers for the same folder. Buttons pin the choice in
 * ~/.toolbox.yaml, which both read.
 *
 * Off the critical path: run once per activation after a delay (extension.ts), and cheap checks
 * first (already shown, no CLI on PATH, a VS Code setting or TOOLBOX_PEER_MESSAGING set) before
 * the backend reads the config files; the CLI is asked only when its binary changed since the
 * last answer (host/cliPeerDefault.ts).
 */
import { promises as fsp } from 'node:fs';
import * as vscode from 'vscode';
import { coalesce } from '../coalesce';
import { plainText } from '../plainText';
import type { ToolboxBackend } from '../../backend/api';
import { CLI_NAME, findOnPath, readCliPeerDefault } from '../../host/cliPeerDefault';

/** Global-state keys of the peer-default notice (ui/config/peerDefaultNotice.ts, docs/decisions/0018). */
export const PEER_DEFAULT_STATE = {
  /** The notice was shown (it is shown once). */
  shown: 'toolbox.peerDefaultNotice.shown',
  /** The CLI's last answer, with the binary's path and mtime it was read from. */
  cliAnswer: 'toolbox.peerDefaultNotice.cliAnswer',
  /** How long after activation the check runs, in ms (off the critical path). */
  delayMs: 8_000,
} as const;

export const PEER_NOTICE_BUTTONS = { keepOn: 'Keep On for Both', useOff: 'Use Off for Both', never: "Don't Ask Again" } as const;

export interface PeerDefaultNoticeDeps {
  backend: Pick<ToolboxBackend, 'peerSetting' | 'pinUserPeerMessaging'>;
  state: vscode.Memento;
  log: vscode.LogOutputChannel;
  folders: () => readonly string[];
  env: NodeJS.ProcessEnv;
  home: string;
  /** Called after a pin was written (the views refresh). */
  pinned?: () => void;
}

interface CachedAnswer {
  binary: string;
  mtimeMs: number;
  value: boolean | null;
}

/** A VS Code setting for peer messaging, in any scope (user, workspace, any folder). */
function settingSetAnywhere(folders: readonly string[]): boolean {
  const scopes = [undefined, ...folders.map((f) => vscode.Uri.file(f))];
  return scopes.some((scope) => {
    const i = vscode.workspace.getConfiguration('toolbox', scope).inspect<boolean>('peerMessaging');
    return i !== undefined && (i.globalValue !== undefined || i.workspaceValue !== undefined || i.workspaceFolderValue !== undefined);
  });
}

/** The CLI's default, asked again only when the binary at that path changed. */
async function cliDefault(deps: PeerDefaultNoticeDeps, binary: string): Promise<boolean | undefined> {
  const mtimeMs = (await fsp.stat(binary)).mtimeMs;
  const cached = deps.state.get<CachedAnswer>(PEER_DEFAULT_STATE.cliAnswer);
  if (cached && cached.binary === binary && cached.mtimeMs === mtimeMs) return cached.value ?? undefined;
  const value = await readCliPeerDefault(binary, deps.home, deps.env);
  await deps.state.update(PEER_DEFAULT_STATE.cliAnswer, { binary, mtimeMs, value: value ?? null } satisfies CachedAnswer);
  deps.log.info(
    value === undefined
      ? `The toolbox CLI at ${binary} does not say its peer-messaging default (an older release, which ships it on).`
      : `The toolbox CLI at ${binary} ships peer messaging ${value ? 'on' : 'off'} by default.`,
  );
  return value;
}

/**
 * Checks and, when the defaults differ, shows the notice (once: remembered in global state).
 * Returns what happened, for the tests.
 */
export async function checkPeerDefaultAgreement(
  deps: PeerDefaultNoticeDeps,
): Promise<'shown-before' | 'no-cli' | 'set' | 'agree' | 'unknown' | 'dismissed' | 'pinned-on' | 'pinned-off' | 'never'> {
  if (deps.state.get<boolean>(PEER_DEFAULT_STATE.shown)) return 'shown-before';
  const binary = await findOnPath(CLI_NAME, deps.env.PATH);
  if (binary === undefined) return 'no-cli';
  const folders = deps.folders();
  if (folders.length === 0 || settingSetAnywhere(folders) || deps.env.TOOLBOX_PEER_MESSAGING !== undefined) return 'set';
  // ~/.toolbox.yaml and the folder's .toolbox.yaml, as the open reads them (the backend loads here).
  let folder: string | undefined;
  let ours = true;
  for (const f of folders) {
    const setting = await deps.backend.peerSetting(f);
    if (setting.source.from === 'default') {
      folder = f;
      ours = setting.on;
      break;
    }
  }
  if (folder === undefined) return 'set';
  const theirs = await cliDefault(deps, binary);
  if (theirs === undefined) return 'unknown';
  if (theirs === ours) return 'agree';

  await deps.state.update(PEER_DEFAULT_STATE.shown, true);
  const onOff = (v: boolean) => (v ? 'on' : 'off');
  const answer = await vscode.window.showInformationMessage(
    plainText(
      `The toolbox CLI on your PATH turns peer messaging ${onOff(theirs)} by default, and Toolbox for VS Code turns it ${onOff(ours)}. ` +
        `Neither is set for ${folder}, so the CLI and the editor open two different containers for it. ` +
        'Pin one choice in ~/.toolbox.yaml so both open the same container.',
      'message',
    ),
    PEER_NOTICE_BUTTONS.keepOn,
    PEER_NOTICE_BUTTONS.useOff,
    PEER_NOTICE_BUTTONS.never,
  );
  if (answer === PEER_NOTICE_BUTTONS.never) return 'never';
  if (answer !== PEER_NOTICE_BUTTONS.keepOn && answer !== PEER_NOTICE_BUTTONS.useOff) return 'dismissed';
  const on = answer === PEER_NOTICE_BUTTONS.keepOn;
  try {
    const file = await deps.backend.pinUserPeerMessaging(on);
    deps.pinned?.();
    void vscode.window.showInformationMessage(
      plainText(
        `Peer messaging is now ${onOff(on)} for both the toolbox CLI and the editor (peer_messaging: ${on} in ${file}). A folder's own setting still wins.`,
        'message',
      ),
    );
  } catch (err) {
    deps.log.error(`Pinning peer messaging in ~/.toolbox.yaml failed: ${(err as Error).message}`);
    void vscode.window.showErrorMessage(plainText(`Toolbox could not write ~/.toolbox.yaml: ${(err as Error).message}`, 'message'));
  }
  return on ? 'pinned-on' : 'pinned-off';
}

/**
 * Runs the check once, PEER_DEFAULT_STATE.delayMs after activation (extension.ts). A check still
 * waiting keeps no process alive (the extension host never waits for it; the startup benchmark's
 * child process exits after activation). `checkNow` runs it at once instead (the tests' API).
 */
export function schedulePeerDefaultCheck(
  deps: PeerDefaultNoticeDeps,
): vscode.Disposable & { checkNow(): ReturnType<typeof checkPeerDefaultAgreement> } {
  const scheduled = coalesce(
    () => {
      checkPeerDefaultAgreement(deps).then(
        (outcome) => deps.log.debug(`Peer-default check: ${outcome}.`),
        (err: Error) => deps.log.warn(`Could not compare peer-messaging defaults with the toolbox CLI: ${err.message}`),
      );
    },
    PEER_DEFAULT_STATE.delayMs,
    { unref: true },
  );
  scheduled();
  return {
    dispose: scheduled.dispose,
    checkNow: () => {
      scheduled.cancel();
      return checkPeerDefaultAgreement(deps);
    },
  };
}
