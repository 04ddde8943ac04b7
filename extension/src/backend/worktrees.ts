/**
 * Agent worktrees: New Agent Worktree (the worktree and its container made side by side while
 * the task is typed, and everything it made taken back as one unit when any step fails or the
 * task is cancelled: `CreateUndo`), and the Worktrees view's list, risk, remove, sync, compare
 * and prune. The git steps are the worktree module's; containers are stopped by `Containers`.
 */
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { withProjectFile } from '../config/files';
import { HOST } from '../contract/upstream';
import type { ObjectNames } from '../contract/types';
import { raceAbort } from '../engine/containers';
import { throwIfAborted } from '../engine/errors';
import {
  addWorktree,
  checkWorktreeCreate,
  fileAtCommit,
  fileAtRef,
  listWorktrees,
  makeWorktreeFolder,
  pruneMerged,
  removalRisk,
  removeWorktree,
  repositoryRefusal,
  repositoryRoot,
  resolveWorktree,
  rollbackCreate,
  syncWorktree,
  worktreeChanges,
  type CreatedWorktree,
} from '../host/worktree';
import { worktreeAgentProblem } from '../plan/worktree';
import type {
  AgentWorktreeChanges,
  AgentWorktreeOpened,
  AgentWorktreePruned,
  AgentWorktreeRef,
  AgentWorktreeRefusal,
  AgentWorktreeRemoved,
  AgentWorktreeRequest,
  AgentWorktreeRisk,
  AgentWorktreeSummary,
  SessionProgress,
  ShellRequest,
  WorktreeService,
} from './api';
import type { EngineConnector } from './connection';
import { worktreeContainerNames, type Containers } from './containers';
import type { FolderConfig } from './folderConfig';
import { samePlan, type ShellOpener } from './shells';

/** How long a New Agent Worktree made while its task was typed waits for it before it is removed again. */
const TASK_WAIT_MS = 30 * 60_000;

export interface AgentWorktreesDeps {
  names: ObjectNames;
  config: FolderConfig;
  connector: EngineConnector;
  shells: ShellOpener;
  containers: Containers;
  log: (line: string) => void;
}

/**
 * What a create made so far, and how to take all of it back (docs/decisions/0026): the
 * container (killed at once when this create made it: it holds nothing of the user's), then the
 * worktree, its branch and base once git added it, else the folder made for it.
 */
class CreateUndo {
  container?: string;
  /** The container was created by this create (not one that already ran). */
  ours = true;
  worktree?: CreatedWorktree;

  constructor(
    private readonly containers: Containers,
    private readonly path: string,
    private readonly madeParent: string | undefined,
  ) {}

  async run(): Promise<void> {
    if (this.container !== undefined) await this.containers.drop(this.container, this.ours).catch(() => undefined);
    if (this.worktree) {
      await rollbackCreate(this.worktree.root, this.worktree.branch, this.worktree.path);
      return;
    }
    await fsp.rm(this.path, { recursive: true, force: true }).catch(() => undefined);
    if (this.madeParent !== undefined) await fsp.rmdir(this.madeParent).catch(() => undefined);
  }
}

export class AgentWorktrees implements WorktreeService {
  constructor(private readonly deps: AgentWorktreesDeps) {}

  async createAgentWorktree(
    request: AgentWorktreeRequest,
    progress: SessionProgress,
    signal: AbortSignal,
  ): Promise<AgentWorktreeOpened | undefined> {
    // The agent is checked before anything is created: a wrong one would only fail at the end.
    const { config } = await this.deps.config.read(request.folder);
    const problem = worktreeAgentProblem(config.agent ?? 'claude');
    if (problem) throw new Error(problem);
    // Nor on an engine on another machine, which could not mount the worktree: before the worktree is made.
    progress.step('Connecting to Docker');
    await this.deps.connector.refuseIfRemote(request.folder);
    progress.step(`Creating the worktree for ${request.branch}`);
    const options = {
      folder: request.folder,
      branch: request.branch,
      base: request.base,
      noFetch: request.noFetch,
      seed: config.worktreeSeed,
      log: (line: string) => progress.log(line),
    };
    const checked = await checkWorktreeCreate(options);
    // The container needs its bind sources, not the checkout: once the refusals pass, the empty
    // folder is made, and the container starts while git fetches, adds (in place, into that
    // folder) and seeds (docs/decisions/0032-session-holder-started-with-the-container.md).
    // Planned from the .toolbox.yaml the checkout will bring, as git has it now (checked again below).
    const projectFile = join(checked.path, HOST.projectConfig);
    const [madeParent, projectText] = await Promise.all([
      makeWorktreeFolder(checked.path),
      fileAtRef(checked, request.noFetch ? checked.base : `origin/${checked.base}`, HOST.projectConfig),
    ]);
    const undo = new CreateUndo(this.deps.containers, checked.path, madeParent);
    const shellRequest: ShellRequest = { folder: checked.path, worktree: { root: checked.root, prompt: request.prompt } };
    const opening = new AbortController();
    const cancel = () => opening.abort(signal.reason);
    signal.addEventListener('abort', cancel, { once: true });
    if (signal.aborted) cancel();
    const early = (async () => {
      const first = await this.deps.shells.prepare(shellRequest, withProjectFile(projectFile, projectText));
      undo.container = first.prepared.container;
      const session = await first.prepared.open(progress, opening.signal);
      undo.ours = session.action === 'create';
      return { ...first, session };
    })();
    // A refusal (fetch, add) stops the open at its next step: the container is not wanted.
    const adding = addWorktree(checked, options).catch((err: unknown) => {
      opening.abort();
      throw err;
    });
    const [added, box] = await Promise.allSettled([adding, early]);
    signal.removeEventListener('abort', cancel);
    if (added.status === 'rejected') {
      // As before the container started alongside: the refusal as it was, nothing left behind.
      await undo.run();
      throw added.reason;
    }
    const made = added.value;
    undo.worktree = made;
    for (const note of made.notes) progress.log(note);
    try {
      if (box.status === 'rejected') throw box.reason;
      throwIfAborted(signal);
      // The open read the configuration before the checkout; the one the checkout (and the seed)
      // brought decides, and so do the protected paths the checkout brought (plan/protect.ts
      // awaitingCheckout). The same plan keeps the container; another starts it again, while the
      // task may still be typed.
      let opened = { prepared: box.value.prepared, session: box.value.session };
      const now = await this.deps.shells.prepare(shellRequest);
      if (!samePlan(now.plan, box.value.plan)) {
        progress.log(
          samePlan({ ...now.plan, protection: undefined }, { ...box.value.plan, protection: undefined })
            ? `The worktree is checked out: ${undo.container} starts again with its protected paths read-only.`
            : `The worktree's own configuration differs from the one ${undo.container} was started with, so it starts again with it.`,
        );
        await this.deps.containers.drop(box.value.prepared.container, undo.ours);
        undo.container = now.prepared.container;
        opened = { prepared: now.prepared, session: await now.prepared.open(progress, signal) };
        undo.ours = opened.session.action === 'create';
      }
      // The task may still be being typed: the worktree and its container are made meanwhile, so
      // the agent starts as soon as it is given. No task (the question cancelled) removes them again.
      if (request.prompt instanceof Promise) {
        progress.step('Ready: waiting for the task');
        if ((await raceAbort(request.prompt, signal, TASK_WAIT_MS)) === undefined) {
          await undo.run();
          progress.log(`Cancelled: the worktree ${made.branch} and its container were removed again.`);
          return undefined;
        }
      }
      return { ...made, ...opened };
    } catch (err) {
      await undo.run();
      const why = err instanceof Error ? err.message : String(err);
      throw new Error(
        `${why} The worktree ${made.branch} was removed again, so nothing is left behind; fix the cause and create it again.`,
        {
          cause: err,
        },
      );
    }
  }

  async agentWorktrees(folders: readonly string[]): Promise<AgentWorktreeSummary[]> {
    const roots = new Set<string>();
    for (const f of folders) {
      const root = await repositoryRoot(f).catch(() => undefined);
      if (root !== undefined) roots.add(root);
    }
    const lists = await Promise.all([...roots].map((r) => listWorktrees(r).catch(() => [])));
    const worktrees = lists.flat();
    if (worktrees.length === 0) return [];
    // Container state by name, best effort: the view still lists worktrees when Docker is down.
    const byName = new Map<string, string>();
    try {
      const { docker } = await this.deps.connector.engine();
      for (const c of await docker.listContainers({ all: true })) for (const n of c.Names) byName.set(n.replace(/^\//, ''), c.State);
    } catch {
      // No engine: no container states.
    }
    return worktrees.map((w) => {
      const name = worktreeContainerNames(w.path, this.deps.names).find((n) => byName.has(n));
      return { ...w, ...(name !== undefined ? { container: { name, state: byName.get(name)! } } : {}) };
    });
  }

  async agentWorktreeRefusals(folders: readonly string[]): Promise<AgentWorktreeRefusal[]> {
    const out: AgentWorktreeRefusal[] = [];
    for (const folder of folders) {
      const err = await repositoryRefusal(folder);
      if (err === undefined || out.some((r) => r.message === err.message)) continue;
      out.push({ folder, code: err.code as AgentWorktreeRefusal['code'], message: err.message, file: err.file, key: err.key });
    }
    return out;
  }

  async agentWorktreeRisk(ref: AgentWorktreeRef): Promise<AgentWorktreeRisk> {
    return removalRisk(ref.root, ref.branch);
  }

  async removeAgentWorktree(ref: AgentWorktreeRef, options: { force: boolean; deleteRemote: boolean }): Promise<AgentWorktreeRemoved> {
    const wt = await resolveWorktree(ref.root, ref.branch);
    if (!options.force) {
      // The refusal for uncommitted changes comes before the container is touched.
      const risk = await removalRisk(ref.root, ref.branch);
      if (risk.dirtyFiles.length > 0) {
        throw new Error(
          `The worktree of ${ref.branch} has uncommitted changes. Commit (or stash) them first, or remove it with Force, which discards them.`,
        );
      }
    }
    await this.deps.containers.stopWorktreeContainers(wt.path);
    const out = await removeWorktree({ folder: ref.root, branch: ref.branch, force: options.force, deleteRemote: options.deleteRemote });
    this.deps.log(`Removed the agent worktree ${ref.branch} (${out.path})${out.branchDeleted ? ' and its branch' : ''}.`);
    return out;
  }

  async syncAgentWorktree(ref: AgentWorktreeRef, log: (line: string) => void): Promise<{ base: string; resumed: boolean }> {
    const out = await syncWorktree({ folder: ref.root, branch: ref.branch, log });
    return { base: out.base, resumed: out.resumed };
  }

  async agentWorktreeChanges(ref: AgentWorktreeRef): Promise<AgentWorktreeChanges> {
    return worktreeChanges(ref.root, ref.branch);
  }

  async agentWorktreeFileAt(worktreePath: string, commit: string, file: string): Promise<string> {
    return fileAtCommit(worktreePath, commit, file);
  }

  async pruneAgentWorktrees(folder: string, log: (line: string) => void): Promise<AgentWorktreePruned> {
    return pruneMerged({ folder, log, beforeRemove: (path) => this.deps.containers.stopWorktreeContainers(path) });
  }
}
