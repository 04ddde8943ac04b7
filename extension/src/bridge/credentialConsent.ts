/**
 * Who may have the user's git credentials (issue 11, finding 2): the decision the /credential
 * route asks before it runs host git. No vscode here; the prompt and the persistent state are
 * injected (ui/approvals/credentialConsent.ts in the extension, plain objects in tests).
 *
 * - The hosts of the folder's own git remotes are allowed by default. They are recorded the
 *   first time the folder is registered with the bridge (GrantState keeps them per folder) and
 *   never grow by themselves afterwards: `.git/config` is container-writable, so a remote the
 *   container adds later is an "other host" that needs consent like any other.
 * - Any other host, for `get`, makes the user decide: Allow once (the requests waiting now),
 *   Always for this folder (a persisted grant), Deny (refused, and the same host is refused
 *   without asking again for CREDENTIAL_LIMITS_MS.denyMemory). No answer within the consent
 *   time is a refusal; an "Always" that comes later still saves the grant.
 * - `store` and `erase` never prompt: they reach the host's credential store only for an allowed
 *   host (a remote's or a granted one) and are refused otherwise.
 * - One question per folder: while one is open (on screen, even after its request gave up, or
 *   queued), requests for the same host wait for that answer and other hosts of the folder are
 *   refused, so a container cannot stack prompts. Folders take turns, one prompt at a time: a
 *   question waits its turn within its own deadline (a prompt nobody waits for any more no longer
 *   holds the turn, though it may stay on screen), and a turn that comes after its request
 *   stopped waiting shows nothing.
 * Every decision that is not a default allowance is one log line naming the host, never a secret.
 */
import { resolve } from 'node:path';
import { CREDENTIAL_LIMITS_MS, type CREDENTIAL_OPS } from '../contract/shims';
import { REFUSAL_LOG } from './refusals';
import type { GrantState } from './credentialGrants';
import { readWorkspaceRemoteHosts, type WorkspaceRemotes } from './gitRemotes';

export { GrantState, memoryState, type FolderGrants, type KeyValueState } from './credentialGrants';

export type CredentialOp = keyof typeof CREDENTIAL_OPS;
export type CredentialDecision = 'allow' | 'deny';
/** A decision with the reason for a refusal (said to the container, and logged with the host). */
export interface CredentialVerdict {
  decision: CredentialDecision;
  reason?: string;
}
export type ConsentAnswer = 'once' | 'always' | 'deny';

export interface CredentialRequestInfo {
  /** The container name. */
  container: string;
  /** The host workspace folder the container belongs to. */
  folder: string;
  op: CredentialOp;
  /** `host[:port]`, validated and lowercased (gitRemotes.normalizeHost). */
  host: string;
}

export interface ConsentQuestion extends CredentialRequestInfo {
  /** How long the request waits for the answer. */
  timeoutMs: number;
}

/**
 * Shows the question; resolves with the answer, or undefined when the prompt was dismissed.
 * `signal` aborts when no request waits for this answer any more; the prompt may stay up, and an
 * answer given later is still used (an "Always" is saved).
 */
export type ConsentPrompt = (question: ConsentQuestion, signal: AbortSignal) => Promise<ConsentAnswer | undefined>;

export interface CredentialAuthorityOptions {
  grants: GrantState;
  /** Absent: nothing can be asked, so every other host is refused. */
  prompt?: ConsentPrompt;
  log(level: 'info' | 'warn', message: string): void;
  /** Default CREDENTIAL_LIMITS_MS.consent. */
  consentTimeoutMs?: number;
  /** Default CREDENTIAL_LIMITS_MS.denyMemory. */
  denyMemoryMs?: number;
  /** How many refusal lines per interval are logged one by one; default REFUSAL_LOG. */
  refusalLog?: { intervalMs: number; lines: number };
  now?: () => number;
  /** Reads a folder's remote hosts; default readWorkspaceRemoteHosts. */
  readRemotes?: (folder: string) => Promise<WorkspaceRemotes>;
}

interface PendingPrompt {
  answer: Promise<ConsentAnswer | undefined>;
  waiters: number;
  controller: AbortController;
  /** The prompt is (or was) on screen; before that, an aborted one will never show. */
  shown: boolean;
}

const answerText = (a: ConsentAnswer | undefined): string =>
  a === 'deny' ? 'the user denied it' : a === undefined ? 'the prompt was dismissed' : a === 'once' ? 'allowed once' : 'allowed always';

export class CredentialAuthority {
  private readonly pending = new Map<string, PendingPrompt>();
  private readonly denied = new Map<string, number>();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly consentMs: number;
  private readonly denyMemoryMs: number;
  private readonly now: () => number;
  /** Refusal lines logged in the current interval, and the ones only counted (by host). */
  private refusalLines = 0;
  private readonly unlogged = new Map<string, number>();
  private refusalTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: CredentialAuthorityOptions) {
    this.consentMs = options.consentTimeoutMs ?? CREDENTIAL_LIMITS_MS.consent;
    this.denyMemoryMs = options.denyMemoryMs ?? CREDENTIAL_LIMITS_MS.denyMemory;
    this.now = options.now ?? Date.now;
  }

  /**
   * One line per refusal, up to `refusalLog.lines` per interval (a container can ask 30 times a
   * second); past that they are counted and summed up, by host, in one line when it ends.
   */
  private logRefusal(host: string, line: string): void {
    const limits = this.options.refusalLog ?? REFUSAL_LOG;
    if (this.refusalTimer === undefined) {
      this.refusalTimer = setTimeout(() => this.flushRefusals(), limits.intervalMs);
      this.refusalTimer.unref?.();
    }
    if (this.refusalLines < limits.lines) {
      this.refusalLines += 1;
      this.options.log('warn', line);
      return;
    }
    this.unlogged.set(host, (this.unlogged.get(host) ?? 0) + 1);
  }

  /** Logs the counted refusals now (also when the hub is disposed). */
  flushRefusals(): void {
    clearTimeout(this.refusalTimer);
    this.refusalTimer = undefined;
    this.refusalLines = 0;
    if (this.unlogged.size === 0) return;
    const total = [...this.unlogged.values()].reduce((a, b) => a + b, 0);
    const hosts = [...this.unlogged.entries()].sort((a, b) => b[1] - a[1]);
    const named = hosts.slice(0, 8).map(([h, n]) => `${n} × ${h}`);
    if (hosts.length > 8) named.push(`${hosts.length - 8} other hosts`);
    this.unlogged.clear();
    this.options.log('warn', `git credentials: ${total} more refusals, not logged one by one: ${named.join(', ')}.`);
  }

  get grants(): GrantState {
    return this.options.grants;
  }

  /**
   * Called when a container of this folder is registered with the bridge (before it runs):
   * records the folder's remote hosts the first time. A folder without a repository records
   * none, so a remote added later from inside the container is not allowed by default. An agent
   * worktree's remotes are read from its main repository (`repository`).
   */
  async noteWorkspace(folder: string, repository: string = folder): Promise<void> {
    if (this.grants.get(folder)?.remoteHosts !== undefined) return;
    let remotes: WorkspaceRemotes;
    try {
      remotes = await (this.options.readRemotes ?? readWorkspaceRemoteHosts)(repository);
    } catch (error) {
      this.options.log(
        'warn',
        `git credentials: could not read the git remotes of ${folder} (${(error as Error).message}); no host is allowed by default for now.`,
      );
      return;
    }
    if (remotes.skipped !== undefined) {
      this.options.log('warn', `git credentials: ${remotes.skipped}, so no remote host of ${folder} is allowed by default.`);
    }
    try {
      await this.grants.recordRemoteHosts(folder, remotes.hosts);
    } catch (error) {
      // The bridge still starts; only this session's default allowance is lost.
      this.options.log('warn', `git credentials: could not record the git remotes of ${folder} (${(error as Error).message}).`);
      return;
    }
    if (remotes.hosts.length > 0) {
      this.options.log(
        'info',
        `git credentials: ${folder} has remote host(s) ${remotes.hosts.join(', ')}; its containers get their credentials without asking.`,
      );
    }
  }

  async authorize(request: CredentialRequestInfo): Promise<CredentialDecision> {
    return (await this.decide(request)).decision;
  }

  /** authorize(), with the reason for a refusal. */
  async decide(request: CredentialRequestInfo): Promise<CredentialVerdict> {
    const { folder, host, container, op } = request;
    if (this.grants.allows(folder, host)) return { decision: 'allow' };
    const who = `${host} (${op}, container ${container}, folder ${folder})`;
    const refuse = (why: string): CredentialVerdict => {
      this.logRefusal(host, `git credentials: refused ${who}: ${why}.`);
      return { decision: 'deny', reason: why };
    };
    if (op !== 'get') {
      return refuse(
        `${host} is not allowed for this folder, and store and erase reach the host's credential store only for a remote host of the folder or one the user allowed always`,
      );
    }
    const key = `${resolve(folder)}\0${host}`;
    const until = this.denied.get(key);
    if (until !== undefined && this.now() < until)
      return refuse(`the user denied it less than ${Math.round(this.denyMemoryMs / 60_000)} min ago`);
    if (this.options.prompt === undefined) return refuse('it is not a remote host of the folder, and there is no one to ask');

    const live = (p: PendingPrompt | undefined): p is PendingPrompt => p !== undefined && (p.shown || !p.controller.signal.aborted);
    const existing = this.pending.get(key);
    const folderPrefix = `${resolve(folder)}\0`;
    const other = [...this.pending].find(([k, p]) => k !== key && k.startsWith(folderPrefix) && live(p));
    if (!live(existing) && other !== undefined) {
      return refuse(`a question about ${other[0].slice(folderPrefix.length)} for this folder is still open; it has to be answered first`);
    }
    const pending = live(existing) ? existing : this.ask(request, key);
    pending.waiters += 1;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((done) => (timer = setTimeout(() => done('timeout'), this.consentMs)));
    const answer = await Promise.race([pending.answer, timedOut]);
    clearTimeout(timer);
    pending.waiters -= 1;
    if (answer === 'timeout') {
      if (pending.waiters === 0) pending.controller.abort();
      return refuse(`the user did not answer within ${this.consentMs / 1000} s`);
    }
    if (answer === 'once' || answer === 'always') {
      this.options.log('info', `git credentials: ${answerText(answer)} for ${who}.`);
      return { decision: 'allow' };
    }
    return refuse(answerText(answer));
  }

  /** One warning line when the host's credential config is container-writable (hostGit.ts says which file). */
  reportUnsafeConfig(request: CredentialRequestInfo, reason: string): void {
    this.options.log(
      'warn',
      `git credentials: refused ${request.host} (${request.op}, container ${request.container}): ${reason}. The bridge only runs credential helpers from config the container cannot write; move that setting to a file outside the workspace and the container's mounts (or make the mount read-only), then retry.`,
    );
  }

  /** Starts (or queues) the one prompt for this folder and host. */
  private ask(request: CredentialRequestInfo, key: string): PendingPrompt {
    const controller = new AbortController();
    const prompt = this.options.prompt as ConsentPrompt;
    const question: ConsentQuestion = { ...request, timeoutMs: this.consentMs };
    const turn = this.queue.then(() => {
      if (controller.signal.aborted) return undefined;
      pending.shown = true;
      return prompt(question, controller.signal);
    });
    const answer = turn.then(
      (a) => a,
      (error: Error) => {
        this.options.log('warn', `git credentials: the consent prompt failed (${error.message}).`);
        return undefined;
      },
    );
    // The next prompt waits for this answer, or until no request waits for it any more: a prompt
    // left open must not hold back the questions behind it.
    const aborted = new Promise<void>((done) => controller.signal.addEventListener('abort', () => done(), { once: true }));
    this.queue = Promise.race([answer, aborted]);
    const pending: PendingPrompt = { answer, waiters: 0, controller, shown: false };
    this.pending.set(key, pending);
    void answer.then(async (a) => {
      if (this.pending.get(key) === pending) this.pending.delete(key);
      if (a === 'deny') this.denied.set(key, this.now() + this.denyMemoryMs);
      if (a !== 'always') return;
      try {
        await this.grants.grant(request.folder, request.host);
      } catch (error) {
        this.options.log('warn', `git credentials: could not save the grant for ${request.host} (${(error as Error).message}).`);
        return;
      }
      const late = controller.signal.aborted ? ' (after the request had stopped waiting; the next request is allowed)' : '';
      this.options.log('info', `git credentials: granted ${request.host} always for folder ${request.folder}${late}.`);
    });
    return pending;
  }
}
