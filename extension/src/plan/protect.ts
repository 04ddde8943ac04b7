/**
 * Protected paths: what programs on the host read and then run as the user (git's config and
 * hooks, editors' and tools' project settings, agents' project settings, this folder's own
 * .toolbox.yaml) is bound read-only over the folder in every container that mounts it, so an
 * agent in the container cannot plant something the host runs
 * (docs/decisions/0042-protected-paths-read-only.md). Pure: what exists on the host comes in as
 * facts (HostFacts lstat, readDir, readSmall); the placeholders for missing paths come back as data
 * and the engine makes them (engine/placeholders.ts).
 *
 * Three kinds of mount, all binds of a host path at the same place the folder puts it:
 *   read-only   the protected path itself (an existing file or directory, or its placeholder);
 *   pin         a directory on the way to protected paths (`.git`, `.claude`, `.git/objects`),
 *               bound read-write onto itself: a mount point cannot be renamed, so the container
 *               cannot move it aside and put a directory of its own making in its place;
 *   own gitdir  a worktree container's own `<root>/.git/worktrees/<name>`, read-write inside the
 *               read-only `worktrees` (git writes HEAD, the index and logs there), with its
 *               pointers and config read-only again.
 */
import { LABELS } from '../contract/upstream';
import { PLACEHOLDER } from '../contract/constants';
import type { HostFacts, HostPathFact } from '../contract/types';
import { cleanPath } from './naming';
import type { PlaceholderKind, PlannedExclude, PlannedMount, PlannedPlaceholder } from './types';

export type { PlaceholderKind, PlannedExclude, PlannedPlaceholder, ProtectedKind } from './types';

/** What a placeholder file holds when it is made (engine/placeholders.ts) and while it is still ours (the sweep, backend/hostFacts.ts). */
export function placeholderText(kind: 'file' | 'commondir'): string {
  return kind === 'commondir' ? PLACEHOLDER.commonDirText : '';
}

/** Whether a file named `name` holding `text` (with the placeholder's time) is one of ours, untouched. */
export function isPlaceholderText(name: string, text: string): boolean {
  return text === '' || (name === GITDIR_COMMONDIR && text === PLACEHOLDER.commonDirText);
}

/** The file in a git directory that points host git at another one (git's setup.c get_common_dir_noenv). */
const GITDIR_COMMONDIR = 'commondir';

/**
 * Which file or directory a host path is (HostPathFact identity): its inode number and birth time,
 * as lstat gives them (bigint, nanoseconds).
 */
export function pathIdentity(st: { ino: bigint; birthtimeNs: bigint }): string {
  return `${st.ino}@${st.birthtimeNs}`;
}

/** The identities a container records (LABELS.protectedIdentities), by host path; {} when unreadable. */
export function identityRecord(text: string | undefined): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(text ?? '{}');
    if (typeof parsed !== 'object' || parsed === null) return {};
    return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}

/**
 * A protected container's labels with `made` added to its record of identities: the placeholders
 * the engine made (or found) just before the create, which the plan saw as missing. Labels
 * without the record (the protection off) are as they were.
 */
export function withIdentities(labels: Readonly<Record<string, string>>, made: Readonly<Record<string, string>>): Record<string, string> {
  const text = labels[LABELS.protectedIdentities];
  if (text === undefined || Object.keys(made).length === 0) return { ...labels };
  return { ...labels, [LABELS.protectedIdentities]: JSON.stringify({ ...identityRecord(text), ...made }) };
}

/** The value of LABELS.protectedPaths on a protected container. */
export const PROTECTED_PATHS_LABEL_VALUE = 'read-only';

/** The mount names of the protection (never patchable by `mounts:`; drift and the views read them). */
export const PROTECTED_MOUNT = { readonly: 'protected', pin: 'protected-pin' } as const;

/**
 * In the folder itself (and in a worktree folder): paths a host program reads from the folder.
 * A missing one becomes an empty directory: it keeps the name from being created, git shows no
 * empty directory, and the config walk (config/files.ts) skips a `.toolbox.yaml` that is no file.
 */
export const PROTECTED_IN_FOLDER: readonly string[] = ['.envrc', '.mcp.json', '.toolbox.yaml', '.vscode', '.idea', '.devcontainer'];

/**
 * `.gitmodules` in the folder: which submodules host git clones, updates and enters, and from
 * where. Read-only when it exists. Missing in a folder with a repository, its placeholder is an
 * empty *file*: git reads it as "no submodules" (and no longer falls back to a `.gitmodules` staged
 * in the index), VS Code's git extension reads it as a file on every status (a directory failed
 * that status with EISDIR, seen in code-server), and `excludeLine` in the repository's
 * `info/exclude` (read-only in the container) keeps it out of `git status` and `git add -A`. A
 * folder without a repository gets none: no git reads it there, and the container cannot make a
 * repository (docs/decisions/0042-protected-paths-read-only.md).
 */
export const GITMODULES = { name: '.gitmodules', excludeLine: '/.gitmodules' } as const;

/** In `.claude` (pinned when it exists; a missing `.claude` is one read-only placeholder). */
export const PROTECTED_IN_CLAUDE = {
  dir: '.claude',
  /** Always protected; any other `settings*.json` that exists is too. */
  settings: ['settings.json', 'settings.local.json'],
  dirs: ['commands', 'agents'],
} as const;

/**
 * In a git directory: the folder's `.git`, or the main repository's in a worktree container. Every
 * file git follows from there to another config, hooks or object store is read-only, and so is
 * what it runs (docs/decisions/0059-git-indirections-read-only.md): the rest of the directory
 * (HEAD, the index, refs, logs, objects, lock files) stays writable, because git writes it in
 * normal use.
 */
export const PROTECTED_IN_GITDIR: ReadonlyArray<{ name: string; kind: PlaceholderKind }> = [
  { name: 'config', kind: 'file' },
  { name: 'hooks', kind: 'dir' },
  // Attributes (drivers by name), excludes, sparse-checkout and grafts.
  { name: 'info', kind: 'dir' },
  // Every worktree's gitdir: its commondir, gitdir and config.worktree point host git elsewhere.
  { name: 'worktrees', kind: 'dir' },
  // "The repository is over there": its config, hooks and objects would be the ones git obeys.
  { name: GITDIR_COMMONDIR, kind: 'commondir' },
  // Submodules' git directories, each with a config and hooks of its own.
  { name: 'modules', kind: 'dir' },
];

/**
 * The object store's way to another one: `objects/info/alternates` (read-only, an empty file when
 * missing, which git reads as none). `objects` and `objects/info` are pinned so that neither can
 * be moved aside or replaced with a link to another store.
 */
export const GITDIR_OBJECTS = { dir: 'objects', info: 'objects/info', alternates: 'objects/info/alternates' } as const;

/** In a worktree container's own gitdir, which stays writable around them. */
export const PROTECTED_IN_OWN_GITDIR: readonly string[] = ['config.worktree', 'commondir', 'gitdir'];

/** Upstream's worktree folder, in a folder whose `.git` is a directory (plan/worktree.ts layout). */
const WORKTREES_DIR = '.worktrees';

export interface ProtectionInput {
  /** The host folder the container mounts (clean, absolute). */
  workspace: string;
  /** Where the container sees it: /workspace and the mirror. */
  targets: string[];
  /** A worktree container: the main repository's root, whose `.git` the container mounts at its own path. */
  worktreeRoot?: string;
  facts: Pick<HostFacts, 'lstat' | 'readDir' | 'readSmall'>;
}

export interface ProtectionPlan {
  mounts: PlannedMount[];
  placeholders: PlannedPlaceholder[];
  /**
   * Which file or directory every protected path that exists is (HostPathFact identity), by host
   * path. A bind holds only while that entry stays: when a host program replaces it (git writes
   * its config by renaming a new file over it), the kernel detaches the mount in every container,
   * so the container records these (LABELS.protectedIdentities) and drift compares them with the
   * host's (plan/drift.ts).
   */
  identities: Record<string, string>;
  /**
   * A worktree container planned before its checkout (decision 0032 starts it while git adds the
   * worktree): the folder is empty, placeholders there would keep `git worktree add` from using
   * it, so only the main `.git` is protected and the container is replaced once the checkout is
   * there (backend/worktrees.ts compares the plans), before the agent starts.
   */
  awaitingCheckout?: boolean;
}

const OFF_HINT = 'or turn off toolbox.protectedPaths in your user settings to open the folder without the protection';

export function planProtections(input: ProtectionInput): ProtectionPlan {
  const lstat = input.facts.lstat;
  if (lstat === undefined) throw new Error('Protected paths need the host facts lstat, readDir and readSmall.');
  const readDir = input.facts.readDir ?? (() => []);
  const out: ProtectionPlan = { mounts: [], placeholders: [], identities: {} };
  const folder = new Place(out, lstat, input.workspace, input.targets);
  const dotGit = folder.fact('.git');
  if (input.worktreeRoot !== undefined && dotGit.kind === 'missing') {
    out.awaitingCheckout = true;
    protectMainGitDir(out, input, lstat);
    return out;
  }

  const exclude = gitExcludeFile(input, dotGit, lstat);
  if (exclude !== undefined) folder.protect(GITMODULES.name, 'file', undefined, { file: exclude, line: GITMODULES.excludeLine });
  else folder.protectIfPresent(GITMODULES.name);
  for (const rel of PROTECTED_IN_FOLDER) folder.protect(rel, 'dir');

  const claude = folder.fact(PROTECTED_IN_CLAUDE.dir);
  if (claude.kind === 'dir') {
    folder.bind(PROTECTED_IN_CLAUDE.dir, false, claude);
    const existing = readDir(join(input.workspace, PROTECTED_IN_CLAUDE.dir)).filter((n) => /^settings.*\.json$/.test(n));
    for (const name of new Set([...PROTECTED_IN_CLAUDE.settings, ...existing.sort()])) {
      folder.protect(`${PROTECTED_IN_CLAUDE.dir}/${name}`, 'dir');
    }
    for (const name of PROTECTED_IN_CLAUDE.dirs) folder.protect(`${PROTECTED_IN_CLAUDE.dir}/${name}`, 'dir');
  } else {
    // Missing: one read-only placeholder keeps the whole of it from being made; anything else is bound as it is.
    folder.protect(PROTECTED_IN_CLAUDE.dir, 'dir');
  }

  if (dotGit.kind === 'dir') {
    folder.bind('.git', false, dotGit);
    protectGitDir(folder.below('.git'));
    folder.protect(WORKTREES_DIR, 'dir');
  } else {
    // A worktree's or submodule's pointer file is read-only; a folder without one cannot get a
    // repository of the container's making (its config would be the host git's to obey).
    folder.protect('.git', 'dir', dotGit);
  }

  if (input.worktreeRoot !== undefined) protectMainGitDir(out, input, lstat);
  return out;
}

/** A worktree container's main `.git` (mounted at its own path): the git dir's paths, its own gitdir writable inside. */
function protectMainGitDir(out: ProtectionPlan, input: ProtectionInput, lstat: (path: string) => HostPathFact): void {
  const gitDir = join(input.worktreeRoot!, '.git');
  const main = new Place(out, lstat, gitDir, [gitDir]);
  protectGitDir(main);
  const own = ownGitDir(input, gitDir);
  const ownFact = own === undefined ? undefined : main.fact(`worktrees/${own}`);
  if (own !== undefined && ownFact?.kind === 'dir') {
    main.bind(`worktrees/${own}`, false, ownFact);
    for (const name of PROTECTED_IN_OWN_GITDIR) main.protect(`worktrees/${own}/${name}`, 'file');
  }
}

function protectGitDir(dir: Place): void {
  for (const p of PROTECTED_IN_GITDIR) dir.protect(p.name, p.kind);
  if (dir.pinOrProtect(GITDIR_OBJECTS.dir) && dir.pinOrProtect(GITDIR_OBJECTS.info)) dir.protect(GITDIR_OBJECTS.alternates, 'file');
}

/** A host directory `root`, seen in the container at each of `targets`: its mounts and placeholders go into `out`. */
class Place {
  constructor(
    private readonly out: ProtectionPlan,
    private readonly lstat: (path: string) => HostPathFact,
    private readonly root: string,
    private readonly targets: string[],
  ) {}

  /** The same place one directory down. */
  below(rel: string): Place {
    return new Place(
      this.out,
      this.lstat,
      join(this.root, rel),
      this.targets.map((t) => join(t, rel)),
    );
  }

  /** Binds `rel` (what `fact` found there) at each target. */
  bind(rel: string, readonly: boolean, fact: HostPathFact): void {
    const source = join(this.root, rel);
    if (fact.identity !== undefined) this.out.identities[source] = fact.identity;
    for (const t of this.targets) {
      this.out.mounts.push({
        name: readonly ? PROTECTED_MOUNT.readonly : PROTECTED_MOUNT.pin,
        source,
        target: join(t, rel),
        readonly,
        type: 'bind',
        createIfMissing: false,
      });
    }
  }

  /** What is at `rel`; a symbolic link or a file with other names refuses the open. */
  fact(rel: string): HostPathFact {
    return checkedFact(this.lstat, join(this.root, rel));
  }

  /** A protected path that is bound read-only only when it exists. */
  protectIfPresent(rel: string): void {
    const fact = this.fact(rel);
    if (fact.kind !== 'missing') this.bind(rel, true, fact);
  }

  /**
   * A directory that must stay where it is: pinned (read-write onto itself) when it is one; when
   * it is missing (or no directory), protected read-only as a whole instead. Answers whether it
   * was pinned, so that what is inside it can be protected too.
   */
  pinOrProtect(rel: string): boolean {
    const fact = this.fact(rel);
    if (fact.kind === 'dir') {
      this.bind(rel, false, fact);
      return true;
    }
    this.protect(rel, 'dir', fact);
    return false;
  }

  /**
   * A protected path: read-only when it exists, a read-only placeholder made as `missingAs` when it
   * does not (`fact`: what is there, when the caller has already looked; `exclude`: the
   * placeholder's line for git's excludes).
   */
  protect(rel: string, missingAs: PlaceholderKind, fact = this.fact(rel), exclude?: PlannedExclude): void {
    if (fact.kind === 'missing') {
      this.out.placeholders.push({ path: join(this.root, rel), kind: missingAs, ...(exclude !== undefined ? { exclude } : {}) });
    }
    this.bind(rel, true, fact);
  }
}

/** What is at `path`; a symbolic link or a file with other names refuses the open. */
function checkedFact(lstat: (path: string) => HostPathFact, path: string): HostPathFact {
  const f = lstat(path);
  if (f.kind === 'symlink') {
    throw new Error(
      `${path} is a symbolic link, so it cannot be made read-only in the container: the container could replace the link with a file of its own, which host programs would then read. Replace the link with the file or folder it points to, ${OFF_HINT}.`,
    );
  }
  if (f.kind === 'file' && (f.links ?? 1) > 1) {
    throw new Error(
      `${path} has other names (hard links), through which the container could still change it. Replace it with a copy of its own, ${OFF_HINT}.`,
    );
  }
  return f;
}

/**
 * The file host git reads the folder's excludes from besides `.gitignore`:
 * `<common dir>/info/exclude` (git's dir.c setup_standard_excludes; path.c keeps `info/` in the
 * common directory, which every worktree shares). The git directory is the folder's `.git`, or
 * where a worktree's or submodule's `.git` file points; its `commondir` (the placeholder's `.`
 * included) leads to the common one. Undefined when the folder has no repository, or names one
 * that is not there. A link or a file with other names on the way refuses the open, as a
 * protected path does: the engine appends to that file as the user.
 */
function gitExcludeFile(input: ProtectionInput, dotGit: HostPathFact, lstat: (path: string) => HostPathFact): string | undefined {
  const gitDir = dotGit.kind === 'dir' ? join(input.workspace, '.git') : dotGit.kind === 'file' ? pointedGitDir(input) : undefined;
  if (gitDir === undefined) return undefined;
  // As git reads it (setup.c get_common_dir_noenv): the file's text without its line end,
  // relative to the git directory.
  const text = input.facts.readSmall?.(join(gitDir, GITDIR_COMMONDIR))?.replace(/[\r\n]+$/, '');
  if (text === '') return undefined;
  const common = text === undefined ? gitDir : text.startsWith('/') ? cleanPath(text) : join(gitDir, text);
  // The folder's own `.git` was looked at already.
  if ((common !== gitDir || dotGit.kind !== 'dir') && checkedFact(lstat, common).kind !== 'dir') return undefined;
  const info = checkedFact(lstat, join(common, 'info')).kind;
  if (info !== 'dir' && info !== 'missing') return undefined;
  const file = join(common, 'info', 'exclude');
  const fact = checkedFact(lstat, file).kind;
  return fact === 'file' || fact === 'missing' ? file : undefined;
}

/**
 * The name of the worktree's own gitdir under `<root>/.git/worktrees/`, from the `gitdir:` line
 * of the worktree folder's `.git` file (absolute, or relative to the folder); undefined when it
 * is not a direct child there.
 */
function ownGitDir(input: ProtectionInput, gitDir: string): string | undefined {
  const pointed = pointedGitDir(input);
  if (pointed === undefined) return undefined;
  const parent = join(gitDir, 'worktrees');
  if (!pointed.startsWith(`${parent}/`)) return undefined;
  const name = pointed.slice(parent.length + 1);
  return name !== '' && !name.includes('/') ? name : undefined;
}

/** Where the folder's `.git` file points (its `gitdir:` line, absolute or relative to the folder). */
function pointedGitDir(input: ProtectionInput): string | undefined {
  const text = input.facts.readSmall?.(join(input.workspace, '.git'));
  const m = /^gitdir:\s*(.+?)\s*$/m.exec(text ?? '');
  if (!m) return undefined;
  return m[1].startsWith('/') ? cleanPath(m[1]) : join(input.workspace, m[1]);
}

function join(...parts: string[]): string {
  return cleanPath(parts.join('/'));
}
