/** The window's record of its held shells: order kept, duplicates replaced, junk ignored. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SessionRecord } from '../../extension/src/backend/api';
import { SessionStore } from '../../extension/src/ui/shells/sessionStore';

function memento() {
  const data = new Map<string, unknown>();
  return {
    data,
    get: <T>(key: string) => data.get(key) as T,
    update: async (key: string, value: unknown) => void data.set(key, value),
  };
}

const record = (sessionId: string, folder = '/src/app'): SessionRecord => ({
  folder,
  container: 'toolbox-app-1234abcd',
  containerId: 'c0ffee',
  sessionId,
  title: `Toolbox: ${sessionId}`,
  holder: { containerSocket: '/s.sock', user: '1000:1000' },
  cols: 80,
  rows: 24,
  openedAt: 1,
});

describe('SessionStore', () => {
  it('keeps records in the order the terminals opened, per folder', async () => {
    const store = new SessionStore(memento());
    await store.add(record('s1'));
    await store.add(record('s2', '/src/other'));
    await store.add(record('s3'));
    assert.deepEqual(
      store.forFolders(['/src/app']).map((r) => r.sessionId),
      ['s1', 's3'],
    );
  });

  it('replaces a record of the same session and forgets removed ones', async () => {
    const store = new SessionStore(memento());
    await store.add(record('s1'));
    await store.add({ ...record('s1'), title: 'renamed' });
    assert.deepEqual(
      store.all().map((r) => r.title),
      ['renamed'],
    );
    await store.remove(record('s1'));
    assert.deepEqual(store.all(), []);
  });

  it('ignores what is not a record (an older or damaged state)', async () => {
    const m = memento();
    m.data.set('toolbox.sessions.v1', [{ folder: 1 }, 'junk', null, record('s9')]);
    assert.deepEqual(
      new SessionStore(m).all().map((r) => r.sessionId),
      ['s9'],
    );
  });
});
