/**
 * Copy Report's redaction (plan/redact.ts): each rule removes what it is for, and leaves the rest
 * of the report readable. Every case shows the secret in the input and its absence in the output,
 * so a rule that stops working fails here.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { redactReport } from '../../extension/src/plan/redact';

const home = '/home/alice';

describe('redactReport', () => {
  it('removes a bridge token (64 hex digits) from a detail line', () => {
    const token = 'a3f9c2e4b5d60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const out = redactReport(`       Bridge: unix socket (token ${token} answered).`, { home });
    assert.ok(!out.includes(token), out);
    assert.match(out, /token <redacted> answered/);
  });

  it('removes any hex run of 16 digits or more, and keeps the 12-hex image tag and 8-hex container suffix', () => {
    const out = redactReport('id 0123456789abcdef in toolbox-vscode/runtime:3f2a9c1b7d4e, toolbox-app-1a2b3c4d', { home });
    assert.ok(!out.includes('0123456789abcdef'), out);
    assert.match(out, /toolbox-vscode\/runtime:3f2a9c1b7d4e/);
    assert.match(out, /toolbox-app-1a2b3c4d/);
  });

  it('removes a secret the caller names (a share token), wherever it is', () => {
    const out = redactReport('share=zz-top-secret-share and again zz-top-secret-share.', { home, secrets: ['zz-top-secret-share'] });
    assert.ok(!out.includes('zz-top-secret-share'), out);
  });

  it('removes bearer and basic credentials, and key=value secrets', () => {
    const out = redactReport(
      'Authorization: Bearer eyJhbGciOi.payload.sig, Basic dXNlcjpwYXNz, GITHUB_TOKEN=ghp_abcdefghij, password: hunter22',
      { home },
    );
    for (const secret of ['eyJhbGciOi.payload.sig', 'dXNlcjpwYXNz', 'ghp_abcdefghij', 'hunter22'])
      assert.ok(!out.includes(secret), `${secret}: ${out}`);
    assert.match(out, /Bearer <redacted>/);
  });

  it('removes a long mixed-case token, and keeps long lower-case names', () => {
    const token = 'sk_LiveAbCdEf0123456789GhIjKlMnOpQrStUv';
    const out = redactReport(`key ${token}; container toolbox-a-very-long-project-name-for-tests-1a2b3c4d`, { home });
    assert.ok(!out.includes(token), out);
    assert.match(out, /toolbox-a-very-long-project-name-for-tests-1a2b3c4d/);
  });

  it('shows a path under the home as ~/…', () => {
    const out = redactReport('Folders: /home/alice/x, /home/alice/work/proj and /home/alice', { home });
    assert.equal(out, 'Folders: ~/x, ~/work/proj and ~');
    assert.ok(!out.includes('alice'));
  });

  it('does not take a longer name for the home (/home/alice2 is another user)', () => {
    const out = redactReport('/home/alice2/y', { home });
    assert.equal(out, '/home/<user>/y');
  });

  it("takes the user's name out of another home, on Linux, macOS and Windows", () => {
    const out = redactReport('/home/bob/.ssh, /Users/carol/proj and C:\\Users\\dave\\proj', { home });
    assert.equal(out, '/home/<user>/.ssh, /Users/<user>/proj and C:\\Users\\<user>\\proj');
  });

  it("keeps an ssh:// endpoint's host and drops its user (and a URL's password)", () => {
    const out = redactReport('Engine: ssh://alice@build.example.com:2222 and tcp://bob:pw@10.0.0.2:2376', { home });
    assert.equal(out, 'Engine: ssh://<user>@build.example.com:2222 and tcp://<user>@10.0.0.2:2376');
  });

  it('removes the value of an environment variable, leaving its name', () => {
    const env = { MY_API_KEY_FOR_TESTS: 'Zq9-not-a-real-key', NODE_ENV: 'production' };
    const out = redactReport('the proxy said Zq9-not-a-real-key to us', { home, env });
    assert.ok(!out.includes('Zq9-not-a-real-key'), out);
    assert.match(out, /said <\$MY_API_KEY_FOR_TESTS> to us/);
  });

  it('leaves plain words, paths and the engine endpoint of the environment to their own rules', () => {
    const env = {
      TERM_PROGRAM: 'vscode',
      COLORTERM: 'truecolor',
      XDG_RUNTIME_DIR: '/run/user/1000',
      DOCKER_HOST: 'unix:///var/run/docker.sock',
      PROJECT: '/home/alice/proj',
    };
    const text = 'toolbox-vscode/runtime in /run/user/1000 at unix:///var/run/docker.sock for /home/alice/proj';
    assert.equal(redactReport(text, { home, env }), 'toolbox-vscode/runtime in /run/user/1000 at unix:///var/run/docker.sock for ~/proj');
  });

  it('changes nothing in a report without secrets', () => {
    const text = '[PASS] Engine reachable\n       unix:///var/run/docker.sock, found through probing the usual sockets.\n';
    assert.equal(redactReport(text, { home, env: {} }), text);
  });
});
