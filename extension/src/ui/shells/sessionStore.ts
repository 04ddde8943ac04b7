/**
 * The held shells this window has open, in its workspace state (host-side, per workspace; never a
 * container-writable place), so a reloaded window can attach to them again. Order is the order
 * the terminals were opened in.
 */
import type * as vscode from 'vscode';
import type { SessionRecord } from '../../backend/api';

const KEY = 'toolbox.sessions.v1';
/** A window with more held shells than this is not something to restore blindly. */
const MAX_RECORDS = 64;

export class SessionStore {
  constructor(private readonly memento: Pick<vscode.Memento, 'get' | 'update'>) {}

  all(): SessionRecord[] {
    const value = this.memento.get<unknown>(KEY);
    return Array.isArray(value) ? (value.filter(isRecord).slice(0, MAX_RECORDS) as SessionRecord[]) : [];
  }

  forFolders(folders: readonly string[]): SessionRecord[] {
    return this.all().filter((r) => folders.includes(r.folder));
  }

  async add(record: SessionRecord): Promise<void> {
    const rest = this.all().filter((r) => !same(r, record));
    await this.memento.update(KEY, [...rest, record].slice(-MAX_RECORDS));
  }

  async remove(record: Pick<SessionRecord, 'containerId' | 'sessionId'>): Promise<void> {
    const all = this.all();
    const rest = all.filter((r) => !same(r, record));
    if (rest.length !== all.length) await this.memento.update(KEY, rest);
  }
}

function same(a: Pick<SessionRecord, 'containerId' | 'sessionId'>, b: Pick<SessionRecord, 'containerId' | 'sessionId'>): boolean {
  return a.containerId === b.containerId && a.sessionId === b.sessionId;
}

function isRecord(value: unknown): boolean {
  if (!value || typeof value !== 'object') return false;
  const r = value as Record<string, unknown>;
  return ['folder', 'container', 'containerId', 'sessionId', 'title'].every((k) => typeof r[k] === 'string') && !!r.holder;
}
