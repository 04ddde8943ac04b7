/**
 * Agent worktrees, planned: where a toolbox worktree lives, which ones are ours, the git steps of
 * a sync, the gitignored state a new worktree is seeded with, the extra mount that lets git work
 * inside its container, and the command that starts the agent. After upstream's
 * internal/worktree/plan.go and cmd/worktree.go. Pure: no fs, no git; the engine
 * (host/worktree.ts) runs what this decides.
 */
import { AGENT_EXIT_MARK } from '../contract/constants';
import { CONTAINER, WORKTREE } from '../contract/upstream';
import { cleanPath } from './naming';

/** A worktree as `git worktree list --porcelain` reports it. */
export interface WorktreeEntry {
  path: string;
  /** The branch without `refs/heads/`; undefined for a detached HEAD (also mid-rebase). */
  branch?: string;
  head?: string;
  bare: boolean;
  /** git says the directory is gone (`prunable`). */
  prunable: boolean;
}

/** The directory component for a branch: `tbx-` and the branch with `/` as `-` (upstream worktreeDirName). */
export function worktreeDirName(branch: string): string {
  return WORKTREE.prefix + branch.replaceAll('/', '-');
}

/** `<root>/.worktrees/tbx-<branch>` (upstream worktreePath). */
export function worktreePath(root: string, branch: string): string {
  return cleanPath(`${root}/${WORKTREE.dir}/${worktreeDirName(branch)}`);
}

/** A direct child of `<root>/.worktrees` whose name starts with `tbx-` (upstream isToolboxWorktree). */
export function isToolboxWorktree(root: string, path: string): boolean {
  const p = cleanPath(path);
  const parent = p.slice(0, p.lastIndexOf('/'));
  const name = p.slice(p.lastIndexOf('/') + 1);
  return parent === cleanPath(`${root}/${WORKTREE.dir}`) && name.startsWith(WORKTREE.prefix) && name.length > WORKTREE.prefix.length;
}

/** The git config key holding the base a branch was created from. */
export function baseConfigKey(branch: string): string {
  return `branch.${branch}${WORKTREE.baseKeySuffix}`;
}

/**
 * The exclude file with `.worktrees/` present exactly once (upstream ensureExcludeLine): an exact
 * line match, since git does not trim a padded pattern.
 */
export function ensureExcludeLine(body: string, entry: string = WORKTREE.excludeEntry): { body: string; changed: boolean } {
  if (body.split('\n').includes(entry)) return { body, changed: false };
  const sep = body !== '' && !body.endsWith('\n') ? '\n' : '';
  return { body: `${body}${sep}${entry}\n`, changed: true };
}

/** Parses `git worktree list --porcelain` (one block per worktree, blank-line separated). */
export function parseWorktreeList(porcelain: string): WorktreeEntry[] {
  const out: WorktreeEntry[] = [];
  let cur: WorktreeEntry | undefined;
  for (const line of porcelain.split('\n')) {
    if (line.startsWith('worktree ')) {
      if (cur) out.push(cur);
      cur = { path: line.slice('worktree '.length), bare: false, prunable: false };
    } else if (!cur) {
      continue;
    } else if (line.startsWith('branch ')) {
      cur.branch = line.slice('branch '.length).replace(/^refs\/heads\//, '');
    } else if (line.startsWith('HEAD ')) {
      cur.head = line.slice('HEAD '.length);
    } else if (line === 'bare') {
      cur.bare = true;
    } else if (line === 'prunable' || line.startsWith('prunable ')) {
      cur.prunable = true;
    }
  }
  if (cur) out.push(cur);
  return out;
}

/** The toolbox worktrees among the entries. */
export function toolboxWorktrees(root: string, entries: readonly WorktreeEntry[]): WorktreeEntry[] {
  return entries.filter((e) => isToolboxWorktree(root, e.path));
}

/**
 * The toolbox worktree of a branch: by the exact branch, or, for one mid-rebase (detached, no
 * branch line), by its deterministic directory (upstream findToolboxWorktree).
 */
export function findToolboxWorktree(root: string, branch: string, entries: readonly WorktreeEntry[]): WorktreeEntry | undefined {
  const dir = worktreeDirName(branch);
  return toolboxWorktrees(root, entries).find(
    (e) => e.branch === branch || (e.branch === undefined && e.path.slice(e.path.lastIndexOf('/') + 1) === dir),
  );
}

/** `git branch -d|-D <branch>`: safe by default, forced only when the user accepted losing work. */
export function branchDeleteArgs(branch: string, force: boolean): string[] {
  return ['branch', force ? '-D' : '-d', '--', branch];
}

/** The remote branch is deleted only when asked, the local delete happened, and origin has it. */
export function shouldDeleteRemote(localDeleted: boolean, asked: boolean, hasRemote: boolean): boolean {
  return asked && localDeleted && hasRemote;
}

/** A sync's git steps (upstream syncPlan): fetch the base, rebase onto origin/<base>, push with lease. */
export function syncSteps(base: string, opts: { fetch: boolean; push: boolean }): string[][] {
  const steps: string[][] = [];
  if (opts.fetch) steps.push(['fetch', 'origin', '--', base]);
  steps.push(['rebase', `origin/${base}`]);
  if (opts.push) steps.push(['push', '--force-with-lease']);
  return steps;
}

/** Resuming a rebase a sync stopped on (upstream continuePlan). */
export function continueSteps(push: boolean): string[][] {
  return push
    ? [
        ['rebase', '--continue'],
        ['push', '--force-with-lease'],
      ]
    : [['rebase', '--continue']];
}

/** The toolbox worktrees whose branch is merged into its own base (upstream pruneCandidates). */
export function pruneCandidates(
  root: string,
  entries: readonly WorktreeEntry[],
  baseOf: (branch: string) => string | undefined,
  merged: (base: string, branch: string) => boolean,
): WorktreeEntry[] {
  return toolboxWorktrees(root, entries).filter((e) => {
    if (e.branch === undefined) return false;
    const base = baseOf(e.branch);
    return base !== undefined && base !== '' && merged(base, e.branch);
  });
}

/** Local branch names from `git branch --merged` output (markers `*`, `+` and detached lines dropped). */
export function parseBranchList(out: string): Set<string> {
  const names = new Set<string>();
  for (const line of out.split('\n')) {
    const name = line.replace(/^[\s*+]+/, '').trim();
    if (name !== '' && !name.startsWith('(')) names.add(name);
  }
  return names;
}

/** `behind\tahead` from `git rev-list --left-right --count <base>...<branch>`. */
export function parseAheadBehind(out: string): { ahead: number; behind: number } | undefined {
  const m = /^(\d+)\s+(\d+)\s*$/.exec(out.trim());
  return m ? { behind: Number(m[1]), ahead: Number(m[2]) } : undefined;
}

/**
 * The repo-relative paths to seed, in order: upstream's curated set, then `worktree.seed`. A
 * glob entry (`.env.*`) is expanded against the repository root's own entries, which the caller
 * lists. Duplicates and anything not plainly relative are dropped: the engine still copies only
 * what git ignores, and never over a file that is there.
 */
export function seedCandidates(rootEntries: readonly string[], extra: readonly string[] = []): string[] {
  const out: string[] = [];
  const add = (p: string) => {
    const clean = cleanPath(p);
    if (clean === '.' || clean.startsWith('/') || clean.split('/').includes('..') || clean === '.git' || clean.startsWith('.git/')) return;
    if (clean === WORKTREE.dir || clean.startsWith(`${WORKTREE.dir}/`)) return;
    if (!out.includes(clean)) out.push(clean);
  };
  for (const entry of [...WORKTREE.defaultSeed, ...extra]) {
    if (entry.endsWith('*') && !entry.slice(0, -1).includes('/')) {
      const stem = entry.slice(0, -1);
      for (const name of [...rootEntries].sort()) if (name.startsWith(stem) && name.length > stem.length) add(name);
    } else {
      add(entry);
    }
  }
  return out;
}

/** `<root>/.git`, clean. */
export function worktreeGitDir(root: string): string {
  return cleanPath(`${root}/.git`);
}

/**
 * The fixed script of the agent launcher: `$1` is the agent, the rest its arguments. When the agent
 * exits it prints the exit mark (AGENT_EXIT_MARK: its status and its name) before the shell
 * follows, so the terminal reads "claude ended (exit 1)" (ui/agents/agentState.ts), live and, from the
 * held session's replay, after a reload.
 */
export const AGENT_LAUNCH_SCRIPT =
  `agent="$1"; shift; "$agent" "$@"; ` +
  `printf '\\033]${AGENT_EXIT_MARK.osc};${AGENT_EXIT_MARK.tag};%s;%s\\007' "$?" "\${agent##*/}"; exec ${CONTAINER.shell} -i`;

/**
 * The command that starts the agent in a worktree's shell, falling back to an interactive shell
 * when it exits (upstream's ExecCmd). Unlike upstream, the prompt is never put into a shell
 * string: it is one argv element of the exec, which the fixed script passes on as `"$@"`, so
 * `$(…)`, backticks, `;` and quotes in it reach the agent as text.
 */
export function agentLaunchCommand(agent: string, prompt: string | undefined): string[] {
  const args = prompt !== undefined && prompt !== '' ? [prompt] : [];
  return [CONTAINER.shell, '-i', '-c', AGENT_LAUNCH_SCRIPT, 'toolbox-agent', agent, ...args];
}

/**
 * A held shell's command as the views show it: an agent launch reads "claude (agent)", never the
 * fixed script or the task text; any other command is shown as its words.
 */
export function describeShellCommand(cmd: readonly string[]): string {
  if (cmd[2] === '-c' && cmd[3] === AGENT_LAUNCH_SCRIPT && cmd[5] !== undefined) return `${cmd[5]} (agent)`;
  return cmd.join(' ');
}

/** Why an agent name cannot start a worktree session, or undefined (upstream ValidateAgent, worktree subset). */
export function worktreeAgentProblem(agent: string): string | undefined {
  return (WORKTREE.agents as readonly string[]).includes(agent)
    ? undefined
    : `The agent "${agent}" cannot run in an agent worktree: use claude or codex (the agent key in .toolbox.yaml).`;
}

/**
 * A first check of a branch name typed by the user, before git's own (`check-ref-format
 * --branch`): empty, leading `-` (it would read as an option) and whitespace are refused here with
 * a plainer message.
 */
export function branchInputProblem(branch: string): string | undefined {
  if (branch.trim() === '') return 'Type a branch name, for example fix/login-timeout.';
  if (branch.startsWith('-')) return `"${branch}" cannot be a branch name: it starts with "-". Use a name such as fix/login-timeout.`;
  if (/\s/.test(branch)) return `"${branch}" cannot be a branch name: it contains a space. Use "-" instead, such as fix-login-timeout.`;
  return undefined;
}
