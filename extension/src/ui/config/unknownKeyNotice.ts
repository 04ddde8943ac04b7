/**
 * Says once, at Open Toolbox Shell, which keys of the folder's config files Toolbox ignores
 * (issue 26, item 10; the text in ui/config/unknownKeys.ts), with a button that opens the file at the
 * first one, where the quick fix is (ui/config/configDiagnostics.ts). Once per folder and file content,
 * remembered in the window's workspace state.
 */
import * as vscode from 'vscode';
import type { UnknownKey } from '../../config/openIssues';
import { plainText } from '../plainText';
import { configFileLabel, noticeFingerprint, unknownKeysNotice } from './unknownKeys';

/** The workspace-state key: folder → the fingerprint last said. */
const STATE_KEY = 'toolbox.unknownKeyNotices';
/** Bytes of a config file read for the fingerprint (the parser read it whole already). */
const MAX_READ = 1024 * 1024;

export class UnknownKeyNotice {
  constructor(
    private readonly state: vscode.Memento,
    private readonly home: string,
  ) {}

  /** Shows the notice unless this folder's files said exactly this already. */
  async offer(folder: string, keys: readonly UnknownKey[]): Promise<void> {
    const text = unknownKeysNotice(keys, this.home);
    if (text === undefined) return;
    const contents = new Map<string, string>();
    for (const file of new Set(keys.map((k) => k.file))) {
      try {
        const bytes = await vscode.workspace.fs.readFile(vscode.Uri.file(file));
        contents.set(file, Buffer.from(bytes.subarray(0, MAX_READ)).toString('utf8'));
      } catch {
        // Gone since the open read it: the keys alone name the notice.
      }
    }
    const fingerprint = noticeFingerprint(keys, contents);
    const said = this.state.get<Record<string, string>>(STATE_KEY, {});
    if (said[folder] === fingerprint) return;
    await this.state.update(STATE_KEY, { ...said, [folder]: fingerprint });
    const first = keys[0]!;
    const open = `Open ${configFileLabel(first.file, this.home)}`;
    const choice = await vscode.window.showWarningMessage(plainText(text, 'message'), open);
    if (choice !== open) return;
    const line = Math.max((first.line ?? 1) - 1, 0);
    await vscode.window.showTextDocument(vscode.Uri.file(first.file), { selection: new vscode.Range(line, 0, line, 0) });
  }
}
