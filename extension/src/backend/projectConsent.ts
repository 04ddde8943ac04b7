/**
 * The user's approvals of what a project config asks beyond their own (plan/projectReach.ts,
 * docs/decisions/0041-project-config-narrows-only.md): per folder, the hash of the one widening
 * approved, kept where the folder's container cannot write (VS Code's globalState in the
 * extension, handed in as `state`; memory in tests). A changed widening has another hash, so it
 * needs a new approval; a new approval replaces the folder's old one.
 */
import { resolve } from 'node:path';
import { memoryState, type KeyValueState } from '../bridge/credentialGrants';

const STATE_KEY = 'toolbox.projectConfigConsents';

interface Approval {
  hash: string;
  /** ms since the epoch. */
  at: number;
}

export class ProjectConsents {
  constructor(
    private readonly state: KeyValueState = memoryState(),
    private readonly now: () => number = Date.now,
  ) {}

  private all(): Record<string, Approval> {
    const value = this.state.get<Record<string, Approval>>(STATE_KEY);
    return value !== null && typeof value === 'object' ? value : {};
  }

  /** True when the user approved exactly this widening (`hash`) for `folder`. */
  approved(folder: string, hash: string): boolean {
    const entry = this.all()[resolve(folder)];
    return entry !== undefined && entry.hash === hash;
  }

  async approve(folder: string, hash: string): Promise<void> {
    if (!/^[0-9a-f]{64}$/.test(hash))
      throw new Error('That approval does not name a configuration change; open the shell again to review it.');
    await this.state.update(STATE_KEY, { ...this.all(), [resolve(folder)]: { hash, at: this.now() } });
  }
}
