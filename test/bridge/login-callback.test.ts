/**
 * /open and login callbacks (issue 29): a URL whose redirect names the container's loopback has
 * that port forwarded before the browser opens, for this container (named by its token, never by
 * the body); the user's Cancel takes the forward back, and so does no answer in time (a real
 * LoginForward's port then refuses connections); a forwarder that fails or hangs never costs the URL.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LoginForward } from '../../extension/src/engine/loginForward';
import { freePort, tryConnect } from '../support/ports';
import { call, startRig, unixTarget } from './support';

const CODEX = `https://auth.openai.com/oauth/authorize?response_type=code&client_id=app_x&redirect_uri=${encodeURIComponent(
  'http://localhost:1455/auth/callback',
)}&state=y`;

describe('/open forwards a login callback', () => {
  it('forwards the port for this container before the URL opens', async () => {
    const order: string[] = [];
    const rig = await startRig({
      hub: {
        forwardLoginCallback: async (container, port) => {
          order.push(`forward ${container} ${port}`);
          return { release: async () => void order.push('release') };
        },
        openExternal: (url) => void order.push(`open ${url}`),
      },
    });
    try {
      const reply = await call(unixTarget(rig), '/open', { token: rig.token, body: { url: CODEX } });
      assert.equal(reply.status, 204);
      assert.deepEqual(order, [`forward ${rig.registration.key} 1455`, `open ${CODEX}`]);
      // A URL without a loopback callback forwards nothing.
      await call(unixTarget(rig), '/open', { token: rig.token, body: { url: 'https://example.com/?redirect_uri=https://example.com/cb' } });
      assert.equal(order.filter((o) => o.startsWith('forward')).length, 1);
      // The body cannot name another container.
      const named = await call(unixTarget(rig), '/open', { token: rig.token, body: { url: CODEX, container: 'someone-else' } });
      assert.equal(named.status, 400);
      assert.equal(order.filter((o) => o.startsWith('forward')).length, 1);
    } finally {
      await rig.cleanup();
    }
  });

  it("takes the forward back when the user cancels VS Code's question", async () => {
    const order: string[] = [];
    const rig = await startRig({
      hub: {
        forwardLoginCallback: async (_c, port) => {
          order.push(`forward ${port}`);
          return { release: async () => void order.push('release') };
        },
        openExternal: async () => false,
      },
    });
    try {
      const reply = await call(unixTarget(rig), '/open', { token: rig.token, body: { url: CODEX } });
      assert.equal(reply.status, 403);
      assert.deepEqual(order, ['forward 1455', 'release']);
    } finally {
      await rig.cleanup();
    }
  });

  it("closes the forward as soon as VS Code's question goes unanswered in time; a later Open forwards again", async () => {
    const port = await freePort();
    const url = `https://idp.example/authorize?redirect_uri=${encodeURIComponent(`http://localhost:${port}/cb`)}`;
    const forwards: LoginForward[] = [];
    let forwardedAgain!: () => void;
    const again = new Promise<void>((resolve) => (forwardedAgain = resolve));
    let asked!: () => void;
    const question = new Promise<void>((resolve) => (asked = resolve));
    let answer!: (open: boolean) => void;
    const rig = await startRig({
      hub: {
        openConfirmMs: 1_000,
        // The real listener; no container behind it (a connection is closed once accepted).
        forwardLoginCallback: async (container, p) => {
          const forward = await LoginForward.start({ port: p, container, relay: () => Promise.reject(new Error('no container here')) });
          forwards.push(forward);
          if (forwards.length === 2) forwardedAgain();
          return { release: () => forward.close('stopped') };
        },
        openExternal: () =>
          new Promise<boolean>((resolve) => {
            answer = resolve;
            asked();
          }),
      },
    });
    try {
      const reply = call(unixTarget(rig), '/open', { token: rig.token, body: { url } });
      await question;
      assert.equal(await tryConnect(port), 'connected', 'the port is forwarded while VS Code asks');
      const { status, text } = await reply;
      assert.equal(status, 502);
      assert.match(text, /Nobody answered VS Code's question about opening the URL within 1 s/);
      assert.match(text, new RegExp(`The forward of its login callback's port ${port} is taken back`));
      assert.equal(await tryConnect(port), 'ECONNREFUSED', 'closed with the answer, not 10 minutes later');
      assert.equal(forwards[0]?.isOpen, false);
      // The question was still up: the user's Open, late, forwards the port again for the login it opens.
      answer(true);
      await again;
      assert.equal(await tryConnect(port), 'connected');
    } finally {
      await Promise.all(forwards.map((f) => f.close()));
      await rig.cleanup();
    }
  });

  it('a Cancel given after the time-out forwards nothing again', async () => {
    const order: string[] = [];
    let answer!: (open: boolean) => void;
    const answered = new Promise<boolean>((resolve) => (answer = resolve));
    const rig = await startRig({
      hub: {
        openConfirmMs: 50,
        forwardLoginCallback: async (_c, port) => {
          order.push(`forward ${port}`);
          return { release: async () => void order.push('release') };
        },
        openExternal: () => answered,
      },
    });
    try {
      assert.equal((await call(unixTarget(rig), '/open', { token: rig.token, body: { url: CODEX } })).status, 502);
      assert.deepEqual(order, ['forward 1455', 'release']);
      answer(false);
      await answered;
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(order, ['forward 1455', 'release']);
    } finally {
      await rig.cleanup();
    }
  });

  it('opens the URL anyway when the forward is refused or throws', async () => {
    const opened: string[] = [];
    const rig = await startRig({
      hub: {
        forwardLoginCallback: () => Promise.reject(new Error('engine gone')),
        openExternal: (url) => void opened.push(url),
      },
    });
    try {
      assert.equal((await call(unixTarget(rig), '/open', { token: rig.token, body: { url: CODEX } })).status, 204);
      assert.deepEqual(opened, [CODEX]);
    } finally {
      await rig.cleanup();
    }
  });
});
