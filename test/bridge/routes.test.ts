import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DeadlineError, withDeadline } from '../../extension/src/bridge/route';
import { call, rigForSuite, startRig, tcpTarget, unixTarget, type Rig } from './support';

describe('/open', () => {
  let rig: Rig;
  rigForSuite((started) => (rig = started));

  it('opens http and https URLs (scheme case-insensitive) through openExternal, normalised', async () => {
    for (const [url, opened] of [
      ['http://example.com/a?b=c', 'http://example.com/a?b=c'],
      ['HTTPS://Example.com:8443/x#y', 'https://example.com:8443/x#y'],
      ['https://example.com', 'https://example.com/'],
    ]) {
      assert.equal((await call(unixTarget(rig), '/open', { token: rig.token, body: { url } })).status, 204);
      assert.equal(rig.recorded.urls.at(-1), opened);
    }
  });

  it('refuses file:, javascript:, data: and other schemes, empty, hostless, unparsable and over-long URLs', async () => {
    const before = rig.recorded.urls.length;
    const cases: Array<[string, RegExp]> = [
      ['file:///etc/passwd', /scheme "file"/],
      ['javascript:alert(1)', /scheme "javascript"/],
      ['data:text/html,<script>alert(1)</script>', /scheme "data"/],
      ['ftp://example.com/', /scheme "ftp"/],
      ['', /empty/],
      ['not a url', /does not parse/],
      ['http://', /does not parse|no host/],
      [`http://example.com/${'a'.repeat(8192)}`, /longer than 8192/],
    ];
    for (const [url, reason] of cases) {
      const reply = await call(unixTarget(rig), '/open', { token: rig.token, body: { url } });
      assert.equal(reply.status, 400, url);
      assert.match(reply.text, reason, url);
    }
    assert.equal(rig.recorded.urls.length, before);
  });

  it("answers 403 'Cancelled in VS Code' when the user cancels VS Code's question (openExternal resolves false)", async () => {
    const cancelling = await startRig({ hub: { openExternal: async () => false } });
    try {
      const reply = await call(unixTarget(cancelling), '/open', { token: cancelling.token, body: { url: 'https://example.com/' } });
      assert.equal(reply.status, 403);
      assert.match(reply.text, /^Cancelled in VS Code: the user chose not to open the URL\.\n$/);
    } finally {
      await cancelling.cleanup();
    }
  });

  it('waits for the user longer than the old 5 s limit, and runs one /open at a time (issue 13, item 2)', async () => {
    let answer: (opened: boolean) => void = () => undefined;
    const asked: string[] = [];
    const waiting = await startRig({
      hub: {
        openExternal: (url) => {
          asked.push(url);
          return new Promise<boolean>((resolve) => (answer = resolve));
        },
      },
    });
    try {
      const first = call(unixTarget(waiting), '/open', { token: waiting.token, body: { url: 'https://first.example/' } });
      while (asked.length === 0) await new Promise((r) => setTimeout(r, 20));
      // A second URL while VS Code is still asking: busy, and no second dialog.
      const second = await call(tcpTarget(waiting), '/open', { token: waiting.token, body: { url: 'https://second.example/' } });
      assert.equal(second.status, 503);
      assert.match(
        second.text,
        /^Busy: \/open is already handling 1 request from this workspace \(the limit is 1\); wait for it to finish/,
      );
      assert.deepEqual(asked, ['https://first.example/']);
      await new Promise((r) => setTimeout(r, 6_000));
      answer(true);
      assert.equal((await first).status, 204, 'the answer after 6 s still counts');
      waiting.recorded.events.length = 0;
      const third = call(unixTarget(waiting), '/open', { token: waiting.token, body: { url: 'https://third.example/' } });
      while (asked.length < 2) await new Promise((r) => setTimeout(r, 20));
      answer(false);
      assert.equal((await third).status, 403);
      assert.deepEqual(asked, ['https://first.example/', 'https://third.example/']);
    } finally {
      await waiting.cleanup();
    }
  });

  it('gives up on an answer that never comes with a DeadlineError, which /open reports as nobody answering', async () => {
    await assert.rejects(withDeadline(new Promise(() => undefined), 50, 'Opening the URL'), (error: Error) => {
      assert.ok(error instanceof DeadlineError);
      assert.equal(error.message, 'Opening the URL did not finish within 0.05 s');
      return true;
    });
    assert.equal(await withDeadline(Promise.resolve(false), 50, 'Opening the URL'), false, 'a Cancel is an answer, not a time-out');
  });

  it('answers 502 when the host cannot open the URL', async () => {
    const failing = await startRig({
      hub: {
        openExternal: () => {
          throw new Error('no browser');
        },
      },
    });
    try {
      const reply = await call(unixTarget(failing), '/open', { token: failing.token, body: { url: 'http://example.com/' } });
      assert.equal(reply.status, 502);
      assert.match(reply.text, /no browser/);
    } finally {
      await failing.cleanup();
    }
  });
});

describe('/edit', () => {
  let rig: Rig;
  let mounts: string;
  before(async () => {
    rig = await startRig({
      prepare({ root, workspace }) {
        writeFileSync(join(workspace, 'a.txt'), 'a');
        mkdirSync(join(workspace, 'sub'));
        symlinkSync('/etc', join(workspace, 'escape'));
        symlinkSync(join(workspace, 'a.txt'), join(workspace, 'inner'));
        mkdirSync(join(root, 'mounts'));
        writeFileSync(join(root, 'mounts', 'notes.md'), 'n');
        writeFileSync(join(root, 'outside.txt'), 'o');
      },
    });
    mounts = join(rig.root, 'mounts');
    await rig.hub.ensureWorkspace({ ...rig.registration, mountsRoots: [mounts] });
  });
  after(async () => {
    await rig.cleanup();
  });

  const edit = (path: string, editor = 'code') => call(unixTarget(rig), '/edit', { token: rig.token, body: { editor, path } });

  it('opens a file of the workspace in an editor tab and reveals a folder', async () => {
    assert.equal((await edit(join(rig.workspace, 'a.txt'))).status, 204);
    assert.deepEqual(rig.recorded.edits.at(-1), { path: join(rig.workspace, 'a.txt'), isDirectory: false });
    assert.equal((await edit(join(rig.workspace, 'sub'), 'codium')).status, 204);
    assert.deepEqual(rig.recorded.edits.at(-1), { path: join(rig.workspace, 'sub'), isDirectory: true });
    assert.equal((await edit(join(rig.workspace, 'inner'))).status, 204, 'a symlink that stays inside is fine');
  });

  it('opens a file under one of the allowed mounts roots', async () => {
    assert.equal((await edit(join(mounts, 'notes.md'))).status, 204);
    assert.deepEqual(rig.recorded.edits.at(-1), { path: join(mounts, 'notes.md'), isDirectory: false });
  });

  it('refuses traversal, unclean, relative and outside paths, and symlinks pointing out', async () => {
    const before = rig.recorded.edits.length;
    const notOpenable = /it is neither an existing file or folder inside the workspace folder or the container's mounts, nor a new file/;
    const cases: Array<[string, RegExp]> = [
      [`${rig.workspace}/../../etc/passwd`, /absolute and clean/],
      [`${rig.workspace}/sub/../a.txt`, /absolute and clean/],
      [`${rig.workspace}//a.txt`, /absolute and clean/],
      [`${rig.workspace}/./a.txt`, /absolute and clean/],
      [`${rig.workspace}/sub/`, /absolute and clean/],
      ['ws/a.txt', /absolute and clean/],
      ['/etc/passwd', notOpenable],
      [join(rig.root, 'outside.txt'), notOpenable],
      [join(rig.workspace, 'escape', 'passwd'), notOpenable],
      [join(rig.workspace, 'escape'), notOpenable],
    ];
    for (const [path, reason] of cases) {
      const reply = await edit(path);
      assert.equal(reply.status, 400, path);
      assert.match(reply.text, reason, path);
      if (!path.includes('/etc')) assert.ok(!reply.text.includes('/etc'), `the refusal says where ${path} resolves: ${reply.text}`);
    }
    assert.equal(rig.recorded.edits.length, before);
  });

  it('refuses an editor other than code or codium and unknown fields', async () => {
    assert.equal((await edit(join(rig.workspace, 'a.txt'), 'vim')).status, 400);
    const extra = await call(unixTarget(rig), '/edit', { token: rig.token, body: { editor: 'code', path: rig.workspace, line: 3 } });
    assert.equal(extra.status, 400);
    assert.match(extra.text, /unknown field "line"/);
  });

  it('answers 502 when the editor cannot open the path', async () => {
    const failing = await startRig({
      hub: {
        openInEditor: async () => {
          throw new Error('window closed');
        },
      },
    });
    try {
      const reply = await call(tcpTarget(failing), '/edit', { token: failing.token, body: { editor: 'code', path: failing.workspace } });
      assert.equal(reply.status, 502);
      assert.match(reply.text, /window closed/);
    } finally {
      await failing.cleanup();
    }
  });
});
