import * as vscode from 'vscode';
import { confirmDestructive } from '../commands/confirmDestructive';
import { plainText } from '../plainText';
import { stopAndReopen } from './recreateContainer';
import type { ToolboxCommand } from '../commands/toolboxCommand';
import { COMMAND_LABELS } from '../../contract/manifest';

/**
 * The status bar warning's click: a sentence that says what differs and asks whether to restart
 * the one drifted container (short buttons), details that add which setting and what a restart
 * does, or dismiss. Restart reopens the shell the way the container was opened: with the folder's
 * setting, or with the same per-run choice; a new container always gets the folder's toolbox.seccomp,
 * so one restart fixes peer and seccomp drift alike.
 */
export const driftActions: ToolboxCommand = {
  id: COMMAND_LABELS.driftActions.command,
  run: async (s) => {
    const finding = s.statusBar.current[0];
    if (!finding) return undefined;
    const name = finding.container.name;
    const restart = 'Restart';
    const details = 'Details…';
    const dismiss = 'Dismiss';
    s.log.warn(finding.message);
    let answer = await vscode.window.showWarningMessage(plainText(finding.notice.message, 'message'), restart, details, dismiss);
    if (answer === details) {
      answer = (await confirmDestructive(finding.notice.message, finding.notice.detail, restart)) ? restart : undefined;
    }
    if (answer === restart) return stopAndReopen(s, name, finding.folder, finding.perRun ? finding.want : undefined);
    if (answer === dismiss) s.statusBar.dismiss(finding);
    return undefined;
  },
};
