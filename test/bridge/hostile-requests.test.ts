/**
 * Finding 9 of issue 11: /open validated the parsed URL but forwarded the raw string; an /edit
 * path with a newline forged a line of the Toolbox log; and there were no Content-Type or Origin
 * checks, so a browser page could POST to the loopback port.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { describeBridgeEvent } from '../../extension/src/bridge/log';
import { call, rigForSuite, startRig, tcpTarget, unixTarget, type Rig } from './support';

describe('/open forwards the URL it checked (issue 11, finding 9)', () => {
  let rig: Rig;
  rigForSuite((started) => (rig = started));

  it('hands openExternal the WHATWG serialisation, never the raw text another parser could read differently', async () => {
    const cases: Array<[string, string]> = [
      // Tabs and newlines are stripped by WHATWG: one host to the checker, maybe another to the next parser.
      ['https://good.example\t@evil.example/', 'https://good.example@evil.example/'],
      ['https://good.example\n@evil.example/', 'https://good.example@evil.example/'],
      // A backslash is a path separator for WHATWG (host evil.example), userinfo for RFC 3986 parsers.
      ['https://evil.example\\@good.example/', 'https://evil.example/@good.example/'],
      ['  https://example.com/a b  ', 'https://example.com/a%20b'],
      ['https://EXAMPLE.com:443/./x/../y', 'https://example.com/y'],
    ];
    for (const [raw, href] of cases) {
      const reply = await call(unixTarget(rig), '/open', { token: rig.token, body: { url: raw } });
      assert.equal(reply.status, 204, JSON.stringify(raw));
      const opened = rig.recorded.urls.at(-1);
      assert.equal(opened, href, JSON.stringify(raw));
      assert.equal(new URL(opened as string).host, new URL(raw).host, 'what is opened names the host that was checked');
      assert.doesNotMatch(opened as string, /[\t\n\\ ]/);
    }
  });
});

describe('log lines cannot be forged (issue 11, finding 9)', () => {
  it('escapes a newline (and other control characters) in an /edit path in every log line', async () => {
    const rig = await startRig();
    after(() => rig.cleanup());
    const forged = `${rig.workspace}/x\nbridge: /open 204 in 1 ms (unix)\u2028\u001b[2K`;
    const reply = await call(unixTarget(rig), '/edit', { token: rig.token, body: { editor: 'code', path: forged } });
    assert.equal(reply.status, 400);
    const lines = rig.recorded.events.map((e) => describeBridgeEvent(e).text);
    assert.ok(lines.length > 0);
    for (const line of lines) {
      for (const c of ['\n', '\r', '\u2028', '\u2029', '\u001b']) assert.ok(!line.includes(c), JSON.stringify(line));
    }
    assert.ok(
      lines.some((l) => l.includes('x\\nbridge: /open 204')),
      'the path is still in the log, escaped',
    );
  });

  it('escapes control characters in messages, routes and details alike', () => {
    const request = describeBridgeEvent({
      kind: 'request',
      transport: 'tcp',
      route: '/x\r\nfake',
      status: 404,
      durationMs: 1,
      detail: 'a\u0000b\u007fc\u0085d',
    });
    assert.equal(request.text, 'bridge: /x\\r\\nfake 404 in 1 ms (tcp) — a\\u0000b\\u007fc\\u0085d');
    assert.equal(describeBridgeEvent({ kind: 'info', message: 'one\ntwo' }).text, 'bridge: one\\ntwo');
  });
});

describe('Content-Type and Origin (issue 11, finding 9)', () => {
  let rig: Rig;
  rigForSuite((started) => (rig = started));

  it('refuses a POST that is not declared application/json with 415, after the token check', async () => {
    const before = rig.recorded.urls.length;
    const body = JSON.stringify({ url: 'http://a.example/' });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', '']) {
      const reply = await call(unixTarget(rig), '/open', { token: rig.token, body, headers: { 'Content-Type': type } });
      assert.equal(reply.status, 415, type);
      assert.match(reply.text, /only accepts a JSON body sent with Content-Type: application\/json/);
    }
    assert.equal(rig.recorded.urls.length, before, 'nothing was opened');
    const wrongToken = await call(unixTarget(rig), '/open', { token: 'f'.repeat(64), body, headers: { 'Content-Type': 'text/plain' } });
    assert.equal(wrongToken.status, 401, 'the token is checked first');
    for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON']) {
      const ok = await call(unixTarget(rig), '/open', { token: rig.token, body, headers: { 'Content-Type': type } });
      assert.equal(ok.status, 204, type);
    }
  });

  it('refuses any request carrying a browser Origin header, on both transports and every route', async () => {
    const before = rig.recorded.urls.length;
    for (const target of [unixTarget(rig), tcpTarget(rig)]) {
      for (const origin of ['http://evil.example', 'null', `http://127.0.0.1:${rig.hub.port}`]) {
        const open = await call(target, '/open', { token: rig.token, body: { url: 'http://a.example/' }, headers: { Origin: origin } });
        assert.equal(open.status, 403, origin);
        assert.match(open.text, /browser Origin header/);
        const health = await call(target, '/healthz', { method: 'GET', headers: { Origin: origin } });
        assert.equal(health.status, 403, `healthz ${origin}`);
      }
    }
    assert.equal(rig.recorded.urls.length, before, 'nothing was opened');
  });
});
