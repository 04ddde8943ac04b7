/**
 * Login callbacks (issue 29, docs/decisions/0053-login-callbacks-forwarded-per-login.md): the
 * window's forwards from the host's 127.0.0.1:<port> into a container's own loopback, one per
 * port, at most LOGIN_FORWARD.maxForwards at once. Asked for by the bridge's /open (a URL the
 * container opened names a loopback callback, plan/loginCallback.ts) or by Forward a Login Port….
 * The UI hears about each one through `onEvent` (the status bar item, a failure's notification).
 */
import type * as vscode from 'vscode';
import { LOGIN_FORWARD } from '../contract/constants';
import { inspectContainer } from '../engine/containers';
import { LoginForward, LoginPortError, type LoginForwardEnd } from '../engine/loginForward';
import { openLoginRelay } from '../engine/loginRelay';
import { loginPortRefusal } from '../plan/loginCallback';
import type { LoginForwardService } from './api';
import type { LoginForwardEvent, LoginForwardInfo } from './api/loginForwards';
import type { EngineConnector } from './connection';

export interface LoginForwardsDeps {
  connector: Pick<EngineConnector, 'engine'>;
  log: Pick<vscode.LogOutputChannel, 'info' | 'warn'>;
  onEvent?: (event: LoginForwardEvent) => void;
}

interface Entry {
  forward: LoginForward;
  info: LoginForwardInfo;
}

/** A refusal said to the user as it is (a sentence, no code to branch on). */
export class LoginForwardRefusal extends Error {
  override name = 'LoginForwardRefusal';
}

export class LoginForwards implements LoginForwardService, vscode.Disposable {
  private readonly open = new Map<number, Entry>();
  /** Starts in progress, by port: a second ask for the same port waits for the first. */
  private readonly starting = new Map<number, Promise<LoginForwardInfo>>();

  constructor(private readonly deps: LoginForwardsDeps) {}

  loginForwards(): LoginForwardInfo[] {
    return [...this.open.values()].map((e) => ({ ...e.info, closesAt: e.forward.closesAt })).sort((a, b) => a.port - b.port);
  }

  forwardLoginPort(container: string, port: number): Promise<LoginForwardInfo> {
    return this.start(container, port, 'command');
  }

  /**
   * The bridge's /open found a loopback callback in the URL the container opens: forwards it
   * before the browser opens. Never rejects: a refusal is told to the user (a 'failed' event) and
   * the URL still opens. `release` takes the forward back (the user cancelled opening the URL).
   */
  async forwardForUrl(container: string, port: number): Promise<{ release(): Promise<void> } | undefined> {
    try {
      const before = this.open.get(port);
      const info = await this.start(container, port, 'url');
      // Released only when this request opened it: one already open stays for whoever opened it.
      return { release: async () => (before === undefined ? this.stopLoginForward(info.port) : undefined) };
    } catch (err) {
      const message = (err as Error).message;
      this.deps.log.warn(`Login callback on port ${port} for ${container} not forwarded: ${message}`);
      this.deps.onEvent?.({ kind: 'failed', port, container, message });
      return undefined;
    }
  }

  async stopLoginForward(port: number): Promise<void> {
    await this.open.get(port)?.forward.close('stopped');
  }

  dispose(): void {
    for (const { forward } of this.open.values()) void forward.close('stopped');
  }

  private start(container: string, port: number, origin: LoginForwardInfo['origin']): Promise<LoginForwardInfo> {
    const pending = this.starting.get(port);
    if (pending !== undefined) return pending.then(() => this.start(container, port, origin));
    const work = this.startNow(container, port, origin).finally(() => this.starting.delete(port));
    this.starting.set(port, work);
    return work;
  }

  private async startNow(container: string, port: number, origin: LoginForwardInfo['origin']): Promise<LoginForwardInfo> {
    const refusal = loginPortRefusal(port);
    if (refusal !== undefined) throw new LoginForwardRefusal(`Port ${port} is not forwarded: ${refusal}.`);
    const existing = this.open.get(port);
    if (existing !== undefined) {
      if (existing.info.container !== container) {
        throw new LoginForwardRefusal(
          `Port ${port} on this host already forwards a login callback to ${existing.info.container}; stop that one first.`,
        );
      }
      existing.forward.renew();
      return { ...existing.info, closesAt: existing.forward.closesAt };
    }
    if (this.open.size >= LOGIN_FORWARD.maxForwards) {
      throw new LoginForwardRefusal(`At most ${LOGIN_FORWARD.maxForwards} login callbacks are forwarded at once; stop one first.`);
    }
    const ctx = await this.deps.connector.engine();
    if (!ctx.names.isOurs(container)) throw new LoginForwardRefusal(`${container} is not a Toolbox container.`);
    const inspect = await inspectContainer(ctx.docker, container);
    if (inspect === undefined || inspect.State?.Running !== true) {
      throw new LoginForwardRefusal(`${container} is not running, so nothing in it can take a login callback.`);
    }
    if (!ctx.names.isOurs(container, inspect.Config?.Labels)) throw new LoginForwardRefusal(`${container} is not a Toolbox container.`);
    const id = inspect.Id;
    const log = (line: string) => this.deps.log.info(line);
    let forward: LoginForward;
    try {
      forward = await LoginForward.start({
        port,
        container,
        log,
        // By id: a container made later under the same name is not reached.
        relay: () =>
          openLoginRelay(ctx.docker, id, port, (text) => log(`Login callback on port ${port} in ${container}: ${text}`)).catch(
            (err: Error & { statusCode?: number }) => {
              // The container went away or stopped: nothing more can reach it.
              if (err.statusCode === 404 || err.statusCode === 409) void forward.close('failed');
              throw err;
            },
          ),
        onClose: (end) => this.closed(port, forward, end),
      });
    } catch (err) {
      if (err instanceof LoginPortError) throw new LoginForwardRefusal(err.message + publishedHint(inspect, port));
      throw err;
    }
    const info: LoginForwardInfo = { port, container, origin, openedAt: forward.openedAt, closesAt: forward.closesAt };
    this.open.set(port, { forward, info });
    log(
      `Login callback on port ${port} forwarded to ${container} (127.0.0.1:${port} on this host, ${origin === 'url' ? 'from the URL it opened' : 'by command'}).`,
    );
    this.deps.onEvent?.({ kind: 'opened', forward: info });
    return info;
  }

  private closed(port: number, forward: LoginForward, end: LoginForwardEnd): void {
    const entry = this.open.get(port);
    if (entry?.forward !== forward) return;
    this.open.delete(port);
    this.deps.onEvent?.({ kind: 'closed', forward: entry.info, end });
  }
}

/** When the container itself publishes the port on the host (upstream's `--oauth`/`-p`), that is who holds it. */
function publishedHint(inspect: { NetworkSettings?: { Ports?: Record<string, unknown> } }, port: number): string {
  const bound = inspect.NetworkSettings?.Ports?.[`${port}/tcp`];
  return Array.isArray(bound) && bound.length > 0
    ? ` The container itself publishes port ${port} on this host (it was opened with that port), and a published port reaches the container's network interface, not the 127.0.0.1 a login CLI listens on.`
    : '';
}
