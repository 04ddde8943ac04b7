/**
 * The egress policy of each container this window opens (issue 30,
 * docs/decisions/0056-egress-through-a-host-proxy.md). A folder whose mode is `ask` or
 * `allowlist` gets containers without a network (plan/session.ts); this serves each one's proxy
 * (bridge/egressProxy.ts) on a socket in a directory bound read-only into it, decides every
 * connection by the folder's policy as it is at that moment (the settings are read again each
 * time, so an edit or an answer counts for the next connection), asks the user in `ask` mode
 * (EgressPrompter, one question per destination however many connections wait on it), and keeps
 * each container's connection log and counters for the views.
 */
import { rmSync } from 'node:fs';
import type * as vscode from 'vscode';
import { EGRESS, EGRESS_LIMITS } from '../contract/egress';
import { LABELS } from '../contract/upstream';
import { bareName } from '../contract/objects';
import type { EgressConfig } from '../config/model';
import { readWorkspaceRemoteHosts } from '../bridge/gitRemotes';
import { startEgressProxy, type EgressDecision, type EgressProxyOptions } from '../bridge/egressProxy';
import { prepareEndpointDir, type SocketOwner } from '../engine/dockerEndpoint/socket';
import { ownerFromUser } from '../engine/dockerEndpoint/served';
import { planEndpointSocket } from '../plan/dockerEndpoint/socket';
import { decideDestination, formatEgressRule, type EgressDestination, type EgressMode, type EgressPolicy } from '../plan/egress';
import { egressModeOf, egressPolicyOf, strictestMode } from '../plan/egressPolicy';
import type { EgressChoice, EgressLogEntry, EgressPrompter, EgressQuestion, EgressSummary } from './api/egress';
import { EgressPorts } from './egressPorts';
import type { BackendSettings } from './settings';
import type { EndpointEgress } from '../plan/dockerEndpoint/egress';

export interface EgressDeps {
  settings: Pick<BackendSettings, 'egress' | 'protectedPaths'>;
  log: Pick<vscode.LogOutputChannel, 'info' | 'warn'>;
  /** The folder's `egress:` as its next open resolves it (~/.toolbox.yaml, the project file narrowed). */
  configFor(folder: string): Promise<EgressConfig | undefined>;
  /** Asks the user in `ask` mode; absent, such a connection is refused. */
  prompter?: EgressPrompter;
  /** Tests: where the sockets' directories go (default: XDG_RUNTIME_DIR, else /tmp). */
  host?: { xdgRuntimeDir?: string; tmpRoot?: string };
  /** Tests: the proxy's name lookup, the host's addresses, how it dials and its bounds. */
  proxy?: Partial<Pick<EgressProxyOptions, 'lookup' | 'hostAddresses' | 'dial' | 'limits'>>;
}

/** One container's proxy as this window serves it. */
interface Served {
  engine: string;
  container: string;
  folder: string;
  config: EgressConfig | undefined;
  remoteHosts: string[];
  proxy: Promise<{ close(): Promise<void> }>;
  allowed: number;
  denied: number;
  /** Entries counted allowed whose connection is still open: one the proxy cuts after (the SNI check) ends denied. */
  open: Set<EgressLogEntry>;
  /** By `host:port`: the question waiting, and how many connections wait on it. */
  questions: Map<string, Question>;
}

interface Question {
  answer: Promise<EgressChoice>;
  waiting: number;
  abort: AbortController;
}

/** Changes reach the views at most this often per container. */
const CHANGE_THROTTLE_MS = 250;

export class EgressPolicies {
  /** By engine and container name. */
  private readonly served = new Map<string, Served>();
  /** By container name: its connection log, oldest first, at most EGRESS_LIMITS.logEntries. */
  private readonly logs = new Map<string, EgressLogEntry[]>();
  /** By folder: `host:port` answered "Allow for This Folder" in this window (the setting may not be read back yet). */
  private readonly answered = new Map<string, string[]>();
  private readonly listeners = new Set<(container: string) => void>();
  /**
   * By agent worktree folder: its repository's root. A worktree takes its repository's entry of
   * toolbox.egressForFolder too (the strictest mode, both allow lists), and an answer "Allow for
   * This Folder" goes to the repository's entry, so every worktree of it has it.
   */
  private readonly repositories = new Map<string, string>();
  /** By folder: its `egress:` as last read (the views' mode for a container this window does not serve). */
  private readonly configs = new Map<string, EgressConfig | undefined>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private nextQuestion = 1;
  private disposed = false;

  /** Published ports of the containers under a policy, relayed by the host. */
  readonly ports: EgressPorts;

  constructor(private readonly deps: EgressDeps) {
    this.ports = new EgressPorts(deps.log);
  }

  /** The folder's mode for its next container (`open`: the engine's network, no proxy). */
  async mode(folder: string, repository?: string): Promise<EgressMode> {
    if (repository !== undefined && repository !== folder) this.repositories.set(folder, repository);
    const config = await this.deps.configFor(folder);
    this.configs.set(folder, config);
    return egressModeOf({ config, ...this.settingsFor(folder) });
  }

  /** The host directory of the container's proxy socket (bound read-only at EGRESS.containerDir). Pure. */
  dir(engine: string, container: string): string {
    const host = this.deps.host;
    const xdg = host ? host.xdgRuntimeDir : process.env.XDG_RUNTIME_DIR;
    return planEndpointSocket({
      engine,
      container: bareName(container),
      uid: process.getuid?.() ?? 0,
      platform: process.platform,
      ...(xdg ? { xdgRuntimeDir: xdg } : {}),
      tmpRoot: host?.tmpRoot ?? '/tmp',
      files: { dirPrefix: EGRESS.dirPrefix, socket: EGRESS.socket, containerDir: EGRESS.containerDir },
    }).dir;
  }

  /**
   * Serves the proxy of a container of `folder` before it is created (its directory is bound into
   * it) or after a window reload; a second call for the same container keeps the first.
   * `user` is the container's Config.User: the socket is its.
   */
  async serve(engine: string, container: string, folder: string, user: string | undefined): Promise<void> {
    if (this.disposed) throw new Error('The egress proxies have been shut down (the window is closing).');
    const name = bareName(container);
    const key = `${engine}\n${name}`;
    const known = this.served.get(key);
    if (known !== undefined) {
      await known.proxy;
      return;
    }
    const dir = this.dir(engine, name);
    const socketPath = `${dir}/${EGRESS.socket}`;
    const owner: SocketOwner | undefined = ownerFromUser(user, process.getgid?.() ?? 0);
    const served: Served = {
      engine,
      container: name,
      folder,
      config: await this.deps.configFor(folder).then((c) => (this.configs.set(folder, c), c)),
      // Only from a .git/config the container cannot write (protected paths, decision 0042).
      remoteHosts: this.deps.settings.protectedPaths() ? (await readWorkspaceRemoteHosts(folder)).hosts : [],
      proxy: Promise.resolve({ close: async () => undefined }),
      allowed: 0,
      denied: 0,
      open: new Set(),
      questions: new Map(),
    };
    served.proxy = (async () => {
      prepareEndpointDir(dir, owner);
      // A socket an earlier window left is replaced in one step (the proxy binds aside and renames),
      // as the Docker endpoint's is: the newest window of the folder serves the container.
      return startEgressProxy({
        socketPath,
        decide: (dest, _via, signal) => this.decide(served, dest, signal),
        mode: () => this.policy(served).mode,
        onConnection: (entry) => this.record(served, entry),
        onEnd: (entry) => this.ended(served, entry),
        ...(this.deps.proxy ?? {}),
      });
    })();
    this.served.set(key, served);
    try {
      await served.proxy;
    } catch (error) {
      this.served.delete(key);
      throw new Error(`The egress proxy for ${name} could not start: ${(error as Error).message}`, { cause: error });
    }
    const policy = this.policy(served);
    this.deps.log.info(`Egress proxy of ${name} listening (${policy.mode}, ${policy.rules.length} rules) on ${socketPath}.`);
  }

  /**
   * After a window reload: serves the proxy again for a running container created under a policy
   * (its LABELS.egress, and its proxy directory bound at EGRESS.containerDir). Never throws.
   */
  async restore(
    engine: string,
    info: {
      Name?: string;
      Config?: { Labels?: Record<string, string> | null; User?: string };
      Mounts?: Array<{ Source?: string; Destination?: string }>;
    },
  ): Promise<void> {
    const name = bareName(info.Name ?? '');
    if (name === '' || info.Config?.Labels?.[LABELS.egress] !== EGRESS.enforcedLabel) return;
    const mounts = info.Mounts ?? [];
    if (!mounts.some((m) => m.Source === this.dir(engine, name) && m.Destination === EGRESS.containerDir)) return;
    const folder = mounts.find((m) => m.Destination === '/workspace')?.Source;
    if (folder === undefined) return;
    // An agent worktree's container binds its repository's .git at the same path (plan/session.ts worktreeGitMount).
    const gitDir = mounts.find((m) => m.Source !== undefined && m.Source === m.Destination && m.Source.endsWith('/.git'))?.Source;
    if (gitDir !== undefined) this.repositories.set(folder, gitDir.slice(0, -'/.git'.length));
    try {
      await this.serve(engine, name, folder, info.Config?.User);
    } catch (error) {
      this.deps.log.warn(`${(error as Error).message}; programs in ${name} cannot connect out until it is opened again.`);
    }
  }

  /**
   * The container's policy and counters for the views: its folder's mode as this window last read
   * it (at an open or a serve), whether it was created under a policy, what this window's proxy
   * counted. Undefined for a container that is `open` and whose folder is too.
   */
  summary(
    engine: string,
    container: string,
    labels: Readonly<Record<string, string>> | null | undefined,
    folder?: string,
  ): EgressSummary | undefined {
    const served = this.served.get(`${engine}\n${bareName(container)}`);
    const enforced = labels?.[LABELS.egress] === EGRESS.enforcedLabel;
    const mode = served
      ? this.policy(served).mode
      : folder !== undefined
        ? egressModeOf({ config: this.configs.get(folder), ...this.settingsFor(folder) })
        : 'open';
    if (!enforced && served === undefined && mode === 'open') return undefined;
    return {
      mode,
      enforced,
      served: served !== undefined,
      allowed: served?.allowed ?? 0,
      denied: served?.denied ?? 0,
      asking: served?.questions.size ?? 0,
    };
  }

  /**
   * What the container's Docker endpoint must hold it to (plan/dockerEndpoint/egress.ts): for a
   * container this window serves a proxy for, or of a folder under a policy now, its mode, and
   * which registries the daemon may pull from for it (those a rule allows: pulls are never asked
   * about). Read again at each request. Undefined: `open`.
   */
  endpointEgress(folder: string, container: string): EndpointEgress | undefined {
    const name = bareName(container);
    const served = [...this.served.values()].find((s) => s.container === name);
    const mode = served ? this.policy(served).mode : egressModeOf({ config: this.configs.get(folder), ...this.settingsFor(folder) });
    if (mode === 'open') return undefined;
    const policyNow = (): EgressPolicy =>
      served
        ? this.policy(served)
        : egressPolicyOf({
            config: this.configs.get(folder),
            ...this.settingsFor(folder),
            answered: this.answered.get(folder) ?? [],
          }).policy;
    return {
      mode,
      registryAllowed: (host, port) => {
        const verdict = decideDestination(policyNow(), { host, port });
        return verdict.kind === 'allow';
      },
    };
  }

  egressLog(container: string): EgressLogEntry[] {
    return (this.logs.get(bareName(container)) ?? []).map((e) => ({ ...e }));
  }

  onDidChangeEgress(listener: (container: string) => void): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Stops serving a container's proxy; its directory goes when the container is gone. */
  async release(engine: string, container: string, gone: boolean): Promise<void> {
    const name = bareName(container);
    const served = this.served.get(`${engine}\n${name}`);
    this.served.delete(`${engine}\n${name}`);
    if (served) {
      for (const q of served.questions.values()) q.abort.abort();
      await (await served.proxy.catch(() => undefined))?.close();
    }
    if (gone) rmSync(this.dir(engine, name), { recursive: true, force: true });
  }

  /** The window goes away: every proxy stops (a running container's directory stays for the next window). */
  async dispose(): Promise<void> {
    this.disposed = true;
    for (const t of this.pending.values()) clearTimeout(t);
    const all = [...this.served.values()];
    this.served.clear();
    for (const s of all) for (const q of s.questions.values()) q.abort.abort();
    await Promise.all([this.ports.dispose(), ...all.map((s) => s.proxy.then((p) => p.close()).catch(() => undefined))]);
  }

  /** The folder's egress settings, with its repository's when it is an agent worktree. */
  private settingsFor(folder: string): ReturnType<BackendSettings['egress']> {
    const own = this.deps.settings.egress(folder);
    const repository = this.repositories.get(folder);
    if (repository === undefined) return own;
    const theirs = this.deps.settings.egress(repository);
    const folderMode = strictestMode(own.folder?.mode, theirs.folder?.mode);
    const projectMode = strictestMode(own.projectSettingMode, theirs.projectSettingMode);
    return {
      ...(own.userMode ? { userMode: own.userMode } : {}),
      ...(projectMode !== 'open' ? { projectSettingMode: projectMode } : {}),
      folder: {
        ...(folderMode !== 'open' ? { mode: folderMode } : {}),
        allow: [...(own.folder?.allow ?? []), ...(theirs.folder?.allow ?? [])],
      },
    };
  }

  /** Where the folder's answers go: its repository's entry for an agent worktree. */
  private policyFolder(folder: string): string {
    return this.repositories.get(folder) ?? folder;
  }

  /** The folder's policy now: its settings read again, the config and remotes as they were at serve time. */
  private policy(served: Served): EgressPolicy {
    const { policy, problems } = egressPolicyOf({
      config: served.config,
      ...this.settingsFor(served.folder),
      remoteHosts: served.remoteHosts,
      answered: this.answered.get(this.policyFolder(served.folder)) ?? [],
    });
    for (const p of problems) this.warnOnce(`Egress policy of ${served.folder}: ${p}; left out.`);
    // A container created under a policy keeps one while it runs, whatever the folder says now.
    return policy.mode === 'open' ? { ...policy, mode: 'ask' } : policy;
  }

  private async decide(served: Served, dest: EgressDestination, signal: AbortSignal): Promise<EgressDecision> {
    const policy = this.policy(served);
    const verdict = decideDestination(policy, dest);
    if (verdict.kind === 'allow') return { allow: true, rule: verdict.rule };
    if (verdict.kind === 'deny') return { allow: false, reason: verdict.reason };
    if (this.deps.prompter === undefined) return { allow: false, reason: 'no VS Code window can ask you about it' };
    const choice = await this.ask(served, dest, signal);
    if (choice === 'deny') return { allow: false, reason: 'denied in VS Code, or not answered in time' };
    return { allow: true };
  }

  /** One question per destination and container; the answer, or `deny` when no one answers in time. */
  private ask(served: Served, dest: EgressDestination, signal: AbortSignal): Promise<EgressChoice> {
    const prompter = this.deps.prompter;
    if (prompter === undefined) return Promise.resolve('deny');
    const key = formatEgressRule({ host: dest.host, port: dest.port });
    let q = served.questions.get(key);
    if (q === undefined) {
      if (served.questions.size >= EGRESS_LIMITS.maxQuestions) return Promise.resolve('deny');
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), this.deps.proxy?.limits?.askMs ?? EGRESS_LIMITS.askMs);
      const question: EgressQuestion = {
        id: `e${this.nextQuestion++}`,
        container: served.container,
        folder: served.folder,
        host: dest.host,
        port: dest.port,
      };
      const created: Question = {
        abort,
        waiting: 0,
        // The time-out (or the last waiting connection leaving) ends the question here whether or not
        // the prompter settles: one that ignored its signal would otherwise hold every waiting
        // connection, and one of the maxQuestions slots, past askMs for ever.
        answer: Promise.race([
          prompter.ask(question, abort.signal),
          new Promise<EgressChoice>((resolve) => abort.signal.addEventListener('abort', () => resolve('deny'), { once: true })),
        ])
          .catch((): EgressChoice => 'deny')
          .then((choice) => (abort.signal.aborted ? 'deny' : choice))
          .finally(() => {
            clearTimeout(timer);
            served.questions.delete(key);
            this.changed(served.container);
          }),
      };
      created.answer = created.answer.then((choice) => {
        if (choice === 'folder') {
          const where = this.policyFolder(served.folder);
          const list = this.answered.get(where) ?? [];
          if (!list.includes(key)) list.push(key);
          this.answered.set(where, list);
        }
        return choice;
      });
      q = created;
      served.questions.set(key, q);
      this.changed(served.container);
    }
    const question = q;
    question.waiting++;
    // The question goes when every connection waiting on it has given up.
    const gaveUp = () => {
      if (--question.waiting === 0) question.abort.abort();
    };
    signal.addEventListener('abort', gaveUp, { once: true });
    return question.answer.finally(() => signal.removeEventListener('abort', gaveUp));
  }

  private record(served: Served, entry: EgressLogEntry): void {
    if (entry.verdict === 'allowed') {
      served.allowed++;
      served.open.add(entry);
    } else {
      served.denied++;
    }
    const log = this.logs.get(served.container) ?? [];
    log.push(entry);
    if (log.length > EGRESS_LIMITS.logEntries) log.splice(0, log.length - EGRESS_LIMITS.logEntries);
    this.logs.set(served.container, log);
    if (entry.verdict === 'denied') this.deps.log.info(`Egress of ${served.container}: ${entry.reason}`);
    this.changed(served.container);
  }

  /** A connection let through and then cut by the proxy (its first bytes: a ClientHello without the host's name) is a refusal too. */
  private ended(served: Served, entry: EgressLogEntry): void {
    if (served.open.delete(entry) && entry.verdict === 'denied') {
      served.allowed--;
      served.denied++;
      this.deps.log.info(`Egress of ${served.container}: ${entry.reason}`);
    }
    this.changed(served.container);
  }

  private changed(container: string): void {
    if (this.pending.has(container) || this.disposed) return;
    this.pending.set(
      container,
      setTimeout(() => {
        this.pending.delete(container);
        for (const l of this.listeners) l(container);
      }, CHANGE_THROTTLE_MS),
    );
  }

  private readonly warned = new Set<string>();
  private warnOnce(line: string): void {
    if (this.warned.has(line)) return;
    this.warned.add(line);
    this.deps.log.warn(line);
  }
}
