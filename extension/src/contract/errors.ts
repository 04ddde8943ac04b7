/**
 * The one error type that crosses from the backend to the UI: a code the UI can branch on, the
 * sentence the user reads, and the actions that can fix it (each one a button, ui/engines/showEngineError.ts).
 * The UI never reads a message to decide anything.
 *
 * The backend runs from its own bundle (docs/decisions/0005-lazy-backend-bundle.md), so a class
 * made there is not the class the UI bundle knows: `instanceof` fails across them. The check is
 * a brand under a registered symbol, which both bundles share.
 */
const BRAND = Symbol.for('toolbox.error');

/** The refusals and failures of an agent worktree's git steps, each a case the UI can act on. */
export const WORKTREE_ERROR_CODES = [
  'not-a-repo',
  'bad-branch',
  'branch-exists',
  'dir-exists',
  'no-origin',
  'no-default-branch',
  'no-base',
  'fetch-failed',
  'add-failed',
  'not-found',
  'dir-missing',
  'dirty',
  'remove-failed',
  'rebase-conflict',
  'sync-failed',
  /** The repository's config holds a key host git must not read (docs/decisions/0039). */
  'repo-config-unsafe',
  /** A symbolic link (or something else) where git keeps a real folder or file. */
  'path-unsafe',
] as const;

export type WorktreeErrorCode = (typeof WORKTREE_ERROR_CODES)[number];

/** What went wrong, as the UI tells cases apart. */
export type ToolboxErrorCode =
  /** The engine cannot be reached or used (connect, probe, API floor). */
  | 'engine-unreachable'
  /** The engine runs on another machine, so a local folder cannot be mounted. */
  | 'engine-remote'
  /** A recorded held shell cannot be attached again: it ended, or its container is gone. */
  | 'session-gone'
  /**
   * The session holder that answers for a container serves another one (a run directory shared
   * across engines or contexts): nothing is attached (docs/decisions/0043).
   */
  | 'holder-mismatch'
  | WorktreeErrorCode;

/** A fix the UI offers beside the error, one button each. */
export type ErrorAction =
  /** Open the toolbox.dockerHost setting. */
  | 'open-docker-host-setting'
  /** Run Select Engine…. */
  | 'select-engine'
  /** Open the file the error names (`ToolboxError.file`) in the editor. */
  | 'open-file';

export class ToolboxError extends Error {
  readonly [BRAND] = true;

  constructor(
    readonly code: ToolboxErrorCode,
    message: string,
    readonly actions: readonly ErrorAction[] = [],
    options?: ErrorOptions,
    /** The file an `open-file` action opens. */
    readonly file?: string,
  ) {
    super(message, options);
    this.name = 'ToolboxError';
  }
}

/** The error as a ToolboxError, whichever bundle made it; undefined for any other error. */
export function asToolboxError(err: unknown): ToolboxError | undefined {
  return typeof err === 'object' && err !== null && (err as { [BRAND]?: unknown })[BRAND] === true ? (err as ToolboxError) : undefined;
}

/** The error's code, when it is a ToolboxError. */
export function errorCode(err: unknown): ToolboxErrorCode | undefined {
  return asToolboxError(err)?.code;
}

/** The fixes an error offers (none for an error that is not a ToolboxError). */
export function errorActions(err: unknown): readonly ErrorAction[] {
  return asToolboxError(err)?.actions ?? [];
}

/** The sentence to show for any thrown value. */
export function errorText(err: unknown): string {
  return err instanceof Error || asToolboxError(err) ? (err as Error).message : String(err);
}
