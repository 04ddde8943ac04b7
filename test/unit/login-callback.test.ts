/**
 * plan/loginCallback.ts (issue 29): which loopback port an authorize URL from the container sends
 * the browser back to. The URL is hostile: anything but one clear loopback callback on a port the
 * host may listen on names nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BRIDGE_DEFAULT_PORT } from '../../extension/src/contract/manifest';
import { LOGIN_PRESETS } from '../../extension/src/contract/upstream';
import { loginCallbackOf, loginPortRefusal, loginPreset, parseLoginPort, presetPorts } from '../../extension/src/plan/loginCallback';

const enc = encodeURIComponent;

describe('loginCallbackOf', () => {
  it("finds codex's, wrangler's and other CLIs' loopback callbacks", () => {
    const cases: Array<[string, number, string]> = [
      // codex login (its authorize URL, shortened)
      [
        `https://auth.openai.com/oauth/authorize?response_type=code&client_id=app_x&redirect_uri=${enc('http://localhost:1455/auth/callback')}&scope=openid&state=s`,
        1455,
        'redirect_uri',
      ],
      // wrangler login
      [`https://dash.cloudflare.com/oauth2/auth?redirect_uri=${enc('http://localhost:8976/oauth/callback')}&state=x`, 8976, 'redirect_uri'],
      // 127.0.0.1 written out, another parameter name, unencoded
      ['https://idp.example/login?redirect_url=http://127.0.0.1:64120/sonarlint/api/token', 64120, 'redirect_url'],
      ['https://idp.example/cli?callback=http://localhost:8877/', 8877, 'callback'],
      ['https://idp.example/cli?callback_url=http%3A%2F%2Flocalhost%3A7171%2Fcb', 7171, 'callback_url'],
      ['https://idp.example/cli?redirect=http://LOCALHOST:8181/', 8181, 'redirect'],
      // WHATWG spellings of 127.0.0.1 are 127.0.0.1
      ['https://idp.example/a?redirect_uri=http://127.1:9000/cb', 9000, 'redirect_uri'],
      ['https://idp.example/a?redirect_uri=http://0x7f000001:9001/cb', 9001, 'redirect_uri'],
      // the same callback twice is one
      [
        `https://idp.example/a?redirect_uri=${enc('http://localhost:1455/a')}&redirect_uri=${enc('http://127.0.0.1:1455/b')}`,
        1455,
        'redirect_uri',
      ],
      // an http authorize URL
      [`http://127.0.0.1:9/oauth/authorize?redirect_uri=${enc('http://localhost:1455/auth/callback')}`, 1455, 'redirect_uri'],
    ];
    for (const [url, port, param] of cases) {
      const found = loginCallbackOf(url);
      assert.ok(found, url);
      assert.equal(found.port, port, url);
      assert.equal(found.param, param, url);
    }
  });

  it('names nothing for URLs without one clear loopback callback on a port the host may take', () => {
    const none = [
      'https://example.com/',
      'not a url',
      '',
      // no explicit port, or port 80 (which WHATWG drops)
      'https://idp.example/a?redirect_uri=http://localhost/cb',
      'https://idp.example/a?redirect_uri=http://localhost:80/cb',
      // privileged, zero, out of range, the bridge's own range
      'https://idp.example/a?redirect_uri=http://localhost:443/cb',
      'https://idp.example/a?redirect_uri=http://localhost:22/',
      'https://idp.example/a?redirect_uri=http://localhost:0/',
      'https://idp.example/a?redirect_uri=http://localhost:65536/',
      `https://idp.example/a?redirect_uri=http://localhost:${BRIDGE_DEFAULT_PORT}/`,
      // not loopback, or not the host's 127.0.0.1
      'https://idp.example/a?redirect_uri=http://evil.example:1455/cb',
      'https://idp.example/a?redirect_uri=http://localhost.evil.example:1455/cb',
      'https://idp.example/a?redirect_uri=http://127.0.0.2:1455/cb',
      'https://idp.example/a?redirect_uri=http://0.0.0.0:1455/cb',
      'https://idp.example/a?redirect_uri=http://[::1]:1455/cb',
      'https://idp.example/a?redirect_uri=http://192.168.1.10:1455/cb',
      // not http, userinfo, not a URL
      'https://idp.example/a?redirect_uri=https://localhost:1455/cb',
      'https://idp.example/a?redirect_uri=javascript:alert(1)//localhost:1455',
      'https://idp.example/a?redirect_uri=http://user:pw@localhost:1455/cb',
      'https://idp.example/a?redirect_uri=localhost:1455',
      'https://idp.example/a?redirect_uri=',
      // other parameter names, the callback only in the path or fragment
      'https://idp.example/a?next=http://localhost:1455/cb',
      'https://idp.example/http://localhost:1455/cb',
      'https://idp.example/a#redirect_uri=http://localhost:1455/cb',
      // nested: only the URL's own query counts
      `https://idp.example/a?continue=${enc(`https://b.example/?redirect_uri=${enc('http://localhost:1455/cb')}`)}`,
      // two callbacks on different ports: the host cannot tell which one the login uses
      `https://idp.example/a?redirect_uri=${enc('http://localhost:1455/')}&callback=${enc('http://localhost:8976/')}`,
      // not an http(s) URL itself
      `ftp://idp.example/a?redirect_uri=${enc('http://localhost:1455/')}`,
      `file:///a?redirect_uri=${enc('http://localhost:1455/')}`,
      // over-long
      `https://idp.example/${'a'.repeat(9000)}?redirect_uri=${enc('http://localhost:1455/')}`,
    ];
    for (const url of none) assert.equal(loginCallbackOf(url), undefined, url.slice(0, 200));
  });

  it('survives hostile query strings (many parameters, odd encodings) quickly', () => {
    const many = `https://idp.example/a?${Array.from({ length: 2000 }, (_, i) => `redirect_uri=${i % 7}`).join('&')}`;
    const start = performance.now();
    assert.equal(loginCallbackOf(many.slice(0, 8192)), undefined);
    assert.equal(loginCallbackOf('https://idp.example/a?redirect_uri=%E0%A4%A'), undefined);
    assert.equal(loginCallbackOf('https://idp.example/a?redirect_uri=http://localhost:1455%00/'), undefined);
    assert.ok(performance.now() - start < 500);
  });
});

describe('login ports', () => {
  it('lets the host listen on 1024–65535 outside the bridge range only', () => {
    assert.equal(loginPortRefusal(1024), undefined);
    assert.equal(loginPortRefusal(65535), undefined);
    assert.match(loginPortRefusal(1023)!, /1024–65535/);
    assert.match(loginPortRefusal(65536)!, /1024–65535/);
    assert.match(loginPortRefusal(1455.5)!, /whole number/);
    assert.match(loginPortRefusal(Number.NaN)!, /whole number/);
    assert.match(loginPortRefusal(BRIDGE_DEFAULT_PORT + 3)!, /Toolbox bridge/);
  });

  it('reads a typed port, refusing words, signs and the privileged range', () => {
    assert.deepEqual(parseLoginPort(' 1455 '), { port: 1455 });
    for (const bad of ['', 'abc', '-1', '1e4', '0x5af', '14 55', '123456']) assert.ok('refusal' in parseLoginPort(bad), bad);
    assert.deepEqual(parseLoginPort('80'), { refusal: 'Port 80: only ports 1024–65535 are forwarded.' });
  });

  it("offers upstream's --oauth presets (filippolmt/toolbox internal/sessionplan/oauth.go)", () => {
    assert.deepEqual(
      LOGIN_PRESETS.map((p) => `${p.tool} ${presetPorts(p)}`),
      ['codex 1455', 'wrangler 8976', 'glab 7171', 'oci 8181', 'cf 8877–8886', 'sonar 64120–64130'],
    );
    for (const p of LOGIN_PRESETS) for (const port of p.ports) assert.equal(loginPortRefusal(port), undefined, p.tool);
    assert.equal(loginPreset('codex')?.ports[0], 1455);
    assert.equal(loginPreset('gcloud'), undefined);
  });
});
