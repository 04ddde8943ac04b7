/**
 * /open and login callbacks (issue 29): a URL whose redirect names the container's loopback has
 * that port forwarded before the browser opens, for this container (named by its token, never by
 * the body); the user's Cancel takes the forward back; a forwarder that fails or hangs never costs
 * the URL.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
