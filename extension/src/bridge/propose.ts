/**
 * /propose: a change the container's agent cannot make itself, to one of the protected paths of
 * its folder (plan/protect.ts), sent by the `toolbox-propose` shim for the user to review. The
 * route only checks and hands the proposal to the editor (EditorActions.propose); nothing is
 * written unless the user clicks Apply, which calls the proposal's `apply`
 * (docs/decisions/0044-proposals-for-protected-paths.md). The checks, in order:
 *   1. the body: `path` and `content` strings only;
 *   2. the path as text (plan/proposals.ts): clean, relative to the workspace folder, and one of
 *      the protected paths; the content: at most PROPOSAL_LIMITS.contentBytes of text (no NUL or
 *      other binary control character, no broken Unicode);
 *   3. the host: every folder from the workspace folder (resolved) down to the protected one must
 *      be a real folder, never a symbolic link; the target must be missing, a regular file with
 *      one name, or the empty placeholder folder the protection made for a missing file.
 * Apply checks step 3 again at write time and writes with O_NOFOLLOW, so a link planted between
 * the proposal and the click is refused, never followed.
 */
import { constants } from 'node:fs';
import { link, lstat, mkdir, open, readlink, readdir, realpath, rmdir, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { BODY_LIMITS, PROPOSAL_LIMITS, ROUTES, RUN_LIMITS_MS } from '../contract/shims';
import { proposalContentProblem, proposalPath, PROPOSABLE_PATHS } from '../plan/proposals';
import {
  failed,
  forbidden,
  parseBody,
  refused,
  withDeadline,
  type ApplyOutcome,
  type Proposal,
  type ProposalAnswer,
  type Route,
  type RouteResult,
} from './route';

const proposeRequest = z.strictObject({ path: z.string(), content: z.string() });

type Target = { kind: 'file' | 'new' | 'placeholder'; hostPath: string; missingDirs: string[]; root: string };

const errno = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/** One refusal for every host-side reason, so the answer does not describe the host beyond the folder. */
class Unfit extends Error {}

/** The depth of the folder that must exist already: the protected folder a path is in, or the file's own folder. */
function anchorDepth(segments: string[]): number {
  const tree = PROPOSABLE_PATHS.find((p) => p.endsWith('/') && segments.join('/').startsWith(p));
  return tree === undefined ? segments.length - 1 : tree.split('/').length - 1;
}

/** Where `rel` is on the host under the resolved workspace folder, checked as the header says; throws Unfit. */
export async function locateTarget(workspaceFolder: string, rel: string): Promise<Target> {
  let root: string;
  try {
    root = await realpath(workspaceFolder);
  } catch {
    throw new Unfit('the workspace folder is not there');
  }
  const segments = rel.split('/');
  const anchor = anchorDepth(segments);
  const missingDirs: string[] = [];
  let dir = root;
  for (let i = 0; i < segments.length - 1; i++) {
    dir = `${dir}/${segments[i]}`;
    if (missingDirs.length > 0) {
      missingDirs.push(dir);
      continue;
    }
    try {
      const st = await lstat(dir);
      if (st.isSymbolicLink()) throw new Unfit(`${segments.slice(0, i + 1).join('/')} is a symbolic link`);
      if (!st.isDirectory()) throw new Unfit(`${segments.slice(0, i + 1).join('/')} is not a folder`);
    } catch (error) {
      if (error instanceof Unfit) throw error;
      if (errno(error) !== 'ENOENT' || i < anchor) throw new Unfit(`${segments.slice(0, i + 1).join('/')} is not a folder here`);
      missingDirs.push(dir);
    }
  }
  const hostPath = `${dir}/${segments[segments.length - 1]}`;
  if (missingDirs.length > 0) return { kind: 'new', hostPath, missingDirs, root };
  let st;
  try {
    st = await lstat(hostPath);
  } catch (error) {
    if (errno(error) === 'ENOENT') return { kind: 'new', hostPath, missingDirs, root };
    throw new Unfit('it cannot be looked at');
  }
  if (st.isSymbolicLink()) throw new Unfit('it is a symbolic link');
  if (st.isFile()) {
    if (st.nlink > 1) throw new Unfit('it has other names (hard links)');
    return { kind: 'file', hostPath, missingDirs, root };
  }
  // A missing protected file is an empty read-only folder in the container (plan/protect.ts).
  if (st.isDirectory() && anchor === segments.length - 1 && (await readdir(hostPath)).length === 0) {
    return { kind: 'placeholder', hostPath, missingDirs, root };
  }
  throw new Unfit('it is neither a file nor the empty placeholder of a missing one');
}

/** Reads the host file for the diff: '' when missing or a placeholder; never through a link. */
async function readCurrent(workspaceFolder: string, rel: string): Promise<string> {
  const target = await locateTarget(workspaceFolder, rel);
  if (target.kind !== 'file') return '';
  const handle = await open(target.hostPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const limit = PROPOSAL_LIMITS.contentBytes * 4;
    const buffer = Buffer.alloc(limit + 1);
    const { bytesRead } = await handle.read(buffer, 0, limit + 1, 0);
    const text = buffer.subarray(0, Math.min(bytesRead, limit)).toString('utf8');
    return bytesRead > limit ? `${text}\n… (the rest of the file is not shown)` : text;
  } finally {
    await handle.close();
  }
}

/** On Linux, the path an open file really is (/proc/self/fd); undefined elsewhere. */
async function openedPath(fd: number): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  return readlink(`/proc/self/fd/${fd}`).catch(() => undefined);
}

const isHook = (rel: string): boolean => rel.startsWith('.git/hooks/');

/**
 * Writes `content` at `rel`: an existing file in place (the same file, so a container's read-only
 * bind of it stays attached: replacing it would detach the bind, plan/protect.ts), a new one made
 * beside it under a temporary name and linked into place (never over anything that appeared).
 */
export async function applyProposal(workspaceFolder: string, rel: string, content: string): Promise<ApplyOutcome> {
  let target: Target;
  try {
    target = await locateTarget(workspaceFolder, rel);
  } catch (error) {
    throw new Error(`${rel} was not written: ${(error as Error).message}.`, { cause: error });
  }
  const data = Buffer.from(content, 'utf8');
  if (target.kind === 'file') {
    const handle = await open(target.hostPath, constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const st = await handle.stat();
      const real = await openedPath(handle.fd);
      if (!st.isFile() || st.nlink > 1 || (real !== undefined && real !== target.hostPath)) {
        throw new Error(`${rel} was not written: it changed on the host since it was checked.`);
      }
      await handle.write(data, 0, data.length, 0);
      await handle.truncate(data.length);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return 'updated';
  }
  for (const dir of target.missingDirs) {
    await mkdir(dir, { mode: 0o755 }).catch((error: unknown) => {
      if (errno(error) !== 'EEXIST') throw error;
    });
    const st = await lstat(dir);
    if (st.isSymbolicLink() || !st.isDirectory()) throw new Error(`${rel} was not written: a folder on its way is not a real folder.`);
  }
  if (target.kind === 'placeholder') await rmdir(target.hostPath);
  const slash = target.hostPath.lastIndexOf('/');
  const temp = `${target.hostPath.slice(0, slash)}/.toolbox-proposal-${randomBytes(6).toString('hex')}`;
  const mode = isHook(rel) ? 0o755 : 0o644;
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    await handle.write(data, 0, data.length, 0);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temp, target.hostPath);
  } catch (error) {
    throw new Error(
      errno(error) === 'EEXIST'
        ? `${rel} was not written: something was created there since it was checked.`
        : `${rel} was not written: ${(error as Error).message}`,
      { cause: error },
    );
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  return target.kind === 'placeholder' ? 'replaced-placeholder' : 'created';
}

export const proposeRoute: Route = {
  path: ROUTES.propose,
  bodyLimit: BODY_LIMITS.propose,
  bucket: 'propose',
  runLimitMs: RUN_LIMITS_MS.propose,
  logDetail: true,
  async handle(body, workspace, deps): Promise<RouteResult> {
    const parsed = parseBody(proposeRequest, body);
    if ('refusal' in parsed) return parsed.refusal;
    const checked = proposalPath(parsed.value.path);
    if ('problem' in checked) return refused(`Refused to propose ${JSON.stringify(parsed.value.path)}: ${checked.problem}.`);
    const rel = checked.path;
    const contentProblem = proposalContentProblem(parsed.value.content);
    if (contentProblem !== undefined) return refused(`Refused to propose ${rel}: ${contentProblem}.`);
    if (deps.propose === undefined) return forbidden('This editor does not review proposals.');
    let target: Target;
    try {
      target = await locateTarget(workspace.workspaceFolder, rel);
    } catch (error) {
      const why = error instanceof Unfit ? error.message : 'it cannot be looked at';
      return refused(`Refused to propose ${rel}: ${why} on the host.`);
    }
    const folder = target.root;
    const content = parsed.value.content;
    const proposal: Proposal = {
      container: workspace.key,
      workspaceFolder: folder,
      path: rel,
      hostPath: target.hostPath,
      content,
      current: () => readCurrent(folder, rel),
      apply: () => applyProposal(folder, rel, content),
    };
    let answer: ProposalAnswer;
    try {
      answer = await withDeadline(deps.propose(proposal), RUN_LIMITS_MS.propose, 'Handing the proposal to the editor');
    } catch (error) {
      return failed(`The editor could not take the proposal: ${(error as Error).message}`);
    }
    if (!answer.accepted) return forbidden(`Refused to propose ${rel}: ${answer.reason}`);
    return { status: 204 };
  },
};
