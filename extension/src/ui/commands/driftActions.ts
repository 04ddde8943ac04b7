import * as vscode from 'vscode';
import { stopAndReopen } from './recreateContainer';
import type { ToolboxCommand } from './types';

/** The status bar warning's click: fix the one drifted container, explain, or dismiss. */
export const driftActions: ToolboxCommand = {
  id: 'toolbox.driftActions',
  run: async (s) => {
    const finding = s.statusBar.current[0];
    if (!finding) return undefined;
    const name = finding.container.name;
    const fix = `Stop ${name} and reopen`;
    const details = 'Show details';
    const dismiss = 'Dismiss';
    const answer = await vscode.window.showWarningMessage(finding.message, fix, details, dismiss);
    if (answer === fix) return stopAndReopen(s, name, finding.folder);
    if (answer === details) {
      s.log.warn(finding.message);
      s.log.show(true);
    }
    if (answer === dismiss) s.statusBar.dismiss(finding.container.id);
    return undefined;
  },
};
