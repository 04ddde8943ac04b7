/**
 * Login callback forwards in the window (issue 29, docs/decisions/0053): the status bar item
 * "$(key) Login :1455" while any is open (a click stops one), a status bar message when one opens
 * or closes, an error notification when a URL the container opened named a callback the host
 * could not forward. Fed by the backend's events (backend/loginForwards.ts).
 */
import * as vscode from 'vscode';
import type { LoginForwardEvent, LoginForwardInfo } from '../../backend/api/loginForwards';
import { loginForwardNotice, loginForwardStatus } from './loginForwardText';
import { COMMAND_LABELS } from '../../contract/manifest';
import { plainText } from '../plainText';
import { showStatus } from '../views/statusBars';

export class LoginForwardStatus implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly open = new Map<number, LoginForwardInfo>();
  private redraw: NodeJS.Timeout | undefined;

  constructor(private readonly log: Pick<vscode.LogOutputChannel, 'show'>) {
    this.item = vscode.window.createStatusBarItem('toolbox.loginForwards', vscode.StatusBarAlignment.Left, 97);
    this.item.name = 'Toolbox login callbacks';
    this.item.command = COMMAND_LABELS.stopLoginForward.command;
  }

  /** The forwards open now, by port. */
  get forwards(): LoginForwardInfo[] {
    return [...this.open.values()].sort((a, b) => a.port - b.port);
  }

  handle(event: LoginForwardEvent): void {
    if (event.kind === 'opened') this.open.set(event.forward.port, event.forward);
    if (event.kind === 'closed') this.open.delete(event.forward.port);
    this.render();
    const notice = loginForwardNotice(event);
    if (notice === undefined) return;
    if (notice.level === 'status') {
      vscode.window.setStatusBarMessage(plainText(notice.text, 'label'), 8_000);
      return;
    }
    void vscode.window.showErrorMessage(plainText(notice.text, 'message'), 'Show Log').then((answer) => {
      if (answer === 'Show Log') this.log.show(true);
    });
  }

  private render(): void {
    clearTimeout(this.redraw);
    const status = loginForwardStatus(this.forwards, Date.now());
    showStatus(this.item, status);
    if (!status) return;
    // The minutes left in the tooltip.
    this.redraw = setTimeout(() => this.render(), 30_000);
    this.redraw.unref();
  }

  dispose(): void {
    clearTimeout(this.redraw);
    this.item.dispose();
  }
}
