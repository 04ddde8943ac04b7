/**
 * Which paths an agent may propose a change to (bridge/propose.ts): exactly the protected paths
 * of plan/protect.ts, the ones it cannot write itself, named relative to the workspace folder.
 * Pure: the text of the path and of the content only; the host is looked at by the route.
 * (docs/decisions/0044-proposals-for-protected-paths.md)
 */
import { PROPOSAL_LIMITS } from '../contract/shims';
import { GITMODULES, PROTECTED_IN_CLAUDE, PROTECTED_IN_FOLDER, PROTECTED_IN_GITDIR } from './protect';

/** The longest file or folder name, in bytes (NAME_MAX on Linux and macOS). */
const NAME_MAX_BYTES = 255;
// C0 controls, DEL and the C1 controls: never in a proposed path.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// Binary content: NUL and the C0 controls text files do not hold (tab, newline, vertical tab,
// form feed and carriage return are text).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const BINARY = /[\u0000-\u0008\u000e-\u001f\u007f]/;

// Half of a UTF-16 surrogate pair with no other half: JSON can carry it ("\ud800"), UTF-8 cannot.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The directories whose whole content is protected, relative to the folder. */
const PROTECTED_TREES: readonly string[] = [
  ...PROTECTED_IN_FOLDER.filter((p) => ['.vscode', '.idea', '.devcontainer'].includes(p)),
  ...PROTECTED_IN_CLAUDE.dirs.map((d) => `${PROTECTED_IN_CLAUDE.dir}/${d}`),
  // .git/worktrees is protected too, but it is git's bookkeeping, not a file anyone edits.
  ...PROTECTED_IN_GITDIR.filter((p) => p.kind === 'dir' && p.name !== 'worktrees').map((p) => `.git/${p.name}`),
];

/** The protected files, relative to the folder. */
const PROTECTED_FILES: readonly string[] = [
  GITMODULES.name,
  ...PROTECTED_IN_FOLDER.filter((p) => !PROTECTED_TREES.includes(p)),
  ...PROTECTED_IN_GITDIR.filter((p) => p.kind === 'file').map((p) => `.git/${p.name}`),
];

/** Every protected path as the posture tooltip and the shim's help name them (a trailing `/` for a folder). */
export const PROPOSABLE_PATHS: readonly string[] = [
  ...PROTECTED_FILES,
  `${PROTECTED_IN_CLAUDE.dir}/settings*.json`,
  ...PROTECTED_TREES.map((t) => `${t}/`),
].sort();

/**
 * The checked relative path a proposal may target, or the reason it may not: a clean relative
 * path (no `/` at either end, no empty, `.` or `..` segment, no control character, names of at
 * most NAME_MAX bytes) that is one of the protected files or lies inside a protected folder.
 */
export function proposalPath(raw: string): { path: string } | { problem: string } {
  if (raw.length === 0 || raw.length > PROPOSAL_LIMITS.pathChars) {
    return { problem: `the path must be 1 to ${PROPOSAL_LIMITS.pathChars} characters` };
  }
  if (CONTROL.test(raw)) return { problem: 'the path contains a control character' };
  if (raw.startsWith('/')) return { problem: 'the path must be relative to the workspace folder' };
  const segments = raw.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) {
    return { problem: 'the path must be clean: no "..", "." or empty segment and no trailing "/"' };
  }
  if (segments.some((s) => Buffer.byteLength(s) > NAME_MAX_BYTES)) return { problem: 'a name in the path is too long' };
  if (isProposable(segments)) return { path: raw };
  return { problem: `it is not a protected path (those are: ${PROPOSABLE_PATHS.join(', ')}); write other files directly` };
}

function isProposable(segments: string[]): boolean {
  const path = segments.join('/');
  if (PROTECTED_FILES.includes(path)) return true;
  if (segments.length === 2 && segments[0] === PROTECTED_IN_CLAUDE.dir && /^settings.*\.json$/.test(segments[1])) return true;
  return PROTECTED_TREES.some((tree) => path.startsWith(`${tree}/`));
}

/** The reason `content` may not be proposed (too large, binary), or undefined when it is text the host may show. */
export function proposalContentProblem(content: string): string | undefined {
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > PROPOSAL_LIMITS.contentBytes) {
    return `the content is ${bytes} bytes, over the ${PROPOSAL_LIMITS.contentBytes}-byte limit for a proposal`;
  }
  if (BINARY.test(content)) return 'the content is not text (it holds NUL or another control character)';
  if (LONE_SURROGATE.test(content)) return 'the content is not valid Unicode text';
  return undefined;
}
