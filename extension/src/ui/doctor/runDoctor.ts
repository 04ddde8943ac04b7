import * as vscode from 'vscode';
import { COMMAND_LABELS } from '../../contract/manifest';
import { MANAGE_TRUST_COMMAND, TRUST_ENABLED_SETTING } from '../../plan/hostTools';
import { doctorWithProgress } from './doctorDocuments';
import { windowFolders } from '../folders';
import { plainText } from '../plainText';
import type { ToolboxCommand } from '../commands/toolboxCommand';

const COPY_REPORT = 'Copy Report';
const SHOW_LOG = 'Show Log';
const MANAGE_TRUST = 'Manage Workspace Trust';
const OPEN_TRUST_SETTING = 'Open Setting';

/**
 * Toolbox: Run Doctor (issue 31, item 3): checks the engine, this window's folders and their
 * containers (plan/doctor.ts), shows the report as a read-only document (ui/doctor/doctorDocuments.ts), then says
 * how many checks passed, warned and failed, with Copy Report (the redacted report onto the
 * clipboard), when one failed Show Log, and when extensions on this host run the folder's files
 * in a trusted window, Manage Workspace Trust (plan/hostTools.ts: Restricted Mode is the user's
 * choice; docs/decisions/0060).
 */
export const runDoctor: ToolboxCommand = {
  id: COMMAND_LABELS.runDoctor.command,
  run: async (s) => {
    const result = await doctorWithProgress(s.backend, windowFolders(), 'Toolbox: running the doctor');
    await s.doctorDocs.show(result.text);
    const offer = result.checks.find((c) => c.offer !== undefined)?.offer;
    const answer = await vscode.window.showInformationMessage(
      plainText(result.summary, 'message'),
      COPY_REPORT,
      ...(result.counts.failed > 0 ? [SHOW_LOG] : []),
      ...(offer === 'workspace-trust' ? [MANAGE_TRUST] : offer === 'trust-setting' ? [OPEN_TRUST_SETTING] : []),
    );
    if (answer === COPY_REPORT) {
      await vscode.env.clipboard.writeText(result.redacted);
      void vscode.window.showInformationMessage(
        'The doctor report is on the clipboard, redacted: no tokens, user names, home paths or environment values.',
      );
    } else if (answer === SHOW_LOG) {
      s.log.show(true);
    } else if (answer === MANAGE_TRUST) {
      await vscode.commands.executeCommand(MANAGE_TRUST_COMMAND);
    } else if (answer === OPEN_TRUST_SETTING) {
      await vscode.commands.executeCommand('workbench.action.openSettings', TRUST_ENABLED_SETTING);
    }
  },
};
