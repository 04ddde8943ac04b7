/** The agent worktree types that cross between the backend and the UI (New Agent Worktree, the Worktrees view). */
import type { PreparedShell, ShellSession } from './shells';

export interface AgentWorktreeRequest {
  /** Any folder inside the repository. */
  folder: string;
  branch: string;
  /** undefined: the repository's default branch (origin/HEAD). */
  base?: string;
  /** Branch from the base as last fetched, without contacting origin. */
  noFetch?: boolean;
  /**
   * The agent's task, passed to it as one argument. A promise while the user still types it: the
   * worktree and its container are made meanwhile, and `undefined` from it cancels the create,
   * which then leaves nothing behind.
   */
  prompt?: string | Promise<string | undefined>;
}

export interface AgentWorktreeOpened {
  path: string;
  root: string;
  branch: string;
  base: string;
  seeded: string[];
  notes: string[];
  prepared: PreparedShell;
  session: ShellSession;
}

/** A worktree as commands address it: its repository root and branch. */
export interface AgentWorktreeRef {
  root: string;
  branch: string;
}

export interface AgentWorktreeSummary {
  root: string;
  path: string;
  /** undefined while detached (mid-rebase). */
  branch?: string;
  base?: string;
  present: boolean;
  dirty: boolean;
  ahead?: number;
  behind?: number;
  rebasing: boolean;
  /** The worktree's container: its name and state, when one exists. */
  container?: { name: string; state: string };
}

export interface AgentWorktreeChanges {
  path: string;
  base: string;
  mergeBase: string;
  changes: { path: string; oldPath?: string; status: 'added' | 'modified' | 'deleted' | 'renamed' }[];
}

export interface AgentWorktreeRisk {
  path: string;
  dirtyFiles: string[];
  unmergedCommits: number;
  pushed: boolean;
}

export interface AgentWorktreeRemoved {
  path: string;
  branchDeleted: boolean;
  remoteDeleted: boolean;
  notes: string[];
}

export interface AgentWorktreePruned {
  removed: { branch: string; path: string }[];
  kept: { branch: string; path: string; why: string }[];
  notes: string[];
}

/**
 * A repository host git refuses to run on (docs/decisions/0039): its config holds a key outside
 * the allowlist, or a symbolic link stands where git keeps a folder or file.
 */
export interface AgentWorktreeRefusal {
  /** The window folder it was found from. */
  folder: string;
  code: 'repo-config-unsafe' | 'path-unsafe';
  /** The sentence the user reads. */
  message: string;
  /** The file Open File opens, when one is to blame. */
  file?: string;
  /** The config key refused, as git spells it: outside text, shown only after a strict check. */
  key?: string;
}
