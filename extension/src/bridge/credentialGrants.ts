/**
 * Persistent git credential grants per folder (see credentialConsent.ts for what they mean):
 * the remote hosts recorded when a folder was first registered and the "Always for this folder"
 * hosts. Kept apart from the decision logic so the activation bundle (the manage command) does
 * not carry it.
 */
import { resolve } from 'node:path';

/** A key-value store: vscode.Memento satisfies it (globalState), a Map-backed object in tests. */
export interface KeyValueState {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void> | void;
}

export interface FolderGrants {
  folder: string;
  /** The remote hosts recorded when the folder was first registered; undefined before that. */
  remoteHosts?: string[];
  /** Hosts the user allowed with "Always for this folder". */
  granted: string[];
}

const STATE_KEY = 'toolbox.credentialGrants';

/** Grants and recorded remote hosts per folder, in one KeyValueState entry. */
export class GrantState {
  constructor(private readonly state: KeyValueState = memoryState()) {}

  private all(): Record<string, FolderGrants> {
    const value = this.state.get<Record<string, FolderGrants>>(STATE_KEY);
    return value && typeof value === 'object' ? value : {};
  }

  private async put(folder: string, change: (current: FolderGrants) => FolderGrants | undefined): Promise<void> {
    const all = { ...this.all() };
    const key = resolve(folder);
    const next = change(all[key] ?? { folder: key, granted: [] });
    if (next === undefined) delete all[key];
    else all[key] = next;
    await this.state.update(STATE_KEY, all);
  }

  get(folder: string): FolderGrants | undefined {
    return this.all()[resolve(folder)];
  }

  list(): FolderGrants[] {
    return Object.values(this.all()).sort((a, b) => a.folder.localeCompare(b.folder));
  }

  /** True when `host` is one of the folder's recorded remote hosts or granted hosts. */
  allows(folder: string, host: string): boolean {
    const entry = this.get(folder);
    return entry !== undefined && (entry.granted.includes(host) || (entry.remoteHosts ?? []).includes(host));
  }

  /** Records the remote hosts once; later calls keep the first record. */
  async recordRemoteHosts(folder: string, hosts: string[]): Promise<void> {
    if (this.get(folder)?.remoteHosts !== undefined) return;
    await this.put(folder, (c) => ({ ...c, remoteHosts: [...hosts].sort() }));
  }

  async grant(folder: string, host: string): Promise<void> {
    await this.put(folder, (c) => (c.granted.includes(host) ? c : { ...c, granted: [...c.granted, host].sort() }));
  }

  /** Removes the host from the folder's grants and from its recorded remote hosts. */
  async revoke(folder: string, host: string): Promise<void> {
    await this.put(folder, (c) => ({
      ...c,
      granted: c.granted.filter((h) => h !== host),
      ...(c.remoteHosts ? { remoteHosts: c.remoteHosts.filter((h) => h !== host) } : {}),
    }));
  }
}

export function memoryState(): KeyValueState {
  const map = new Map<string, unknown>();
  return {
    get: <T>(key: string) => map.get(key) as T | undefined,
    update: (key: string, value: unknown) => void map.set(key, structuredClone(value)),
  };
}
