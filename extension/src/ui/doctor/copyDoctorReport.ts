import * as vscode from 'vscode';
import { COMMAND_LABELS } from '../../contract/manifest';
import { doctorWithProgress } from './doctorDocuments';
import { windowFolders } from '../folders';
import { plainText } from '../plainText';
import type { ToolboxCommand } from '../commands/toolboxCommand';

/**
 * Toolbox: Copy Report (issue 31, item 3): runs the doctor's checks and puts the report onto the
 * clipboard, redacted for an issue (plan/redact.ts): no tokens, user names, home paths or
 * environment values; the extension, VS Code, OS and engine versions stay.
 */
export const copyDoctorReport: ToolboxCommand = {
  id: COMMAND_LABELS.copyDoctorReport.command,
  run: async (s) => {
    const result = await doctorWithProgress(s.backend, windowFolders(), 'Toolbox: running the doctor for the report');
    await vscode.env.clipboard.writeText(result.redacted);
    void vscode.window.showInformationMessage(
      plainText(
        `${result.summary}. The report is on the clipboard, redacted: no tokens, user names, home paths or environment values.`,
        'message',
      ),
    );
  },
};
