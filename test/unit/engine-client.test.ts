import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { contextMetaPath, currentContextName, resolveEndpoint, unreachable } from '../../extension/src/engine/client';

const config = (ctx: string) => JSON.stringify({ auths: {}, currentContext: ctx });
const meta = (host: string) => JSON.stringify({ Name: 'x', Endpoints: { docker: { Host: host, SkipTLSVerify: false } } });

describe('resolveEndpoint', () => {
  it('prefers the toolbox.dockerHost setting over DOCKER_HOST and the context', () => {
    const r = resolveEndpoint({
      setting: 'unix:///run/user/1000/docker.sock',
      env: { DOCKER_HOST: 'tcp://10.0.0.1:2375' },
      dockerConfigText: config('remote'),
      contextMetaText: meta('tcp://10.0.0.2:2375'),
      platform: 'linux',
    });
    assert.equal(r.source, 'setting');
    assert.equal(r.endpoint, 'unix:///run/user/1000/docker.sock');
    assert.deepEqual(r.options, { socketPath: '/run/user/1000/docker.sock', host: undefined });
  });

  it('treats a blank setting as unset and uses DOCKER_HOST next', () => {
    const r = resolveEndpoint({
      setting: '  ',
      env: { DOCKER_HOST: 'tcp://10.0.0.1:2375' },
      dockerConfigText: config('remote'),
      contextMetaText: meta('tcp://10.0.0.2:2375'),
      platform: 'linux',
    });
    assert.equal(r.source, 'DOCKER_HOST');
    assert.deepEqual(r.options, { host: '10.0.0.1', port: 2375, protocol: 'http' });
  });

  it('uses the current context when neither the setting nor DOCKER_HOST is set', () => {
    const r = resolveEndpoint({
      env: {},
      dockerConfigText: config('colima'),
      contextMetaText: meta('unix:///Users/me/.colima/default/docker.sock'),
      platform: 'darwin',
    });
    assert.equal(r.source, 'context colima');
    assert.equal(r.options.socketPath, '/Users/me/.colima/default/docker.sock');
  });

  it('lets DOCKER_CONTEXT choose the context over config.json', () => {
    assert.equal(currentContextName({ DOCKER_CONTEXT: 'other' }, config('colima')), 'other');
    assert.equal(currentContextName({}, config('colima')), 'colima');
    assert.equal(currentContextName({}, '{not json'), undefined);
  });

  it('falls back to the platform default socket when the context is "default" or absent', () => {
    const linux = resolveEndpoint({ env: {}, dockerConfigText: config('default'), platform: 'linux' });
    assert.equal(linux.source, 'default');
    assert.equal(linux.endpoint, 'unix:///var/run/docker.sock');
    assert.equal(linux.options.socketPath, '/var/run/docker.sock');
    const win = resolveEndpoint({ env: {}, platform: 'win32' });
    assert.equal(win.endpoint, 'npipe:////./pipe/docker_engine');
    assert.equal(win.options.socketPath, '//./pipe/docker_engine');
  });

  it('finds a context’s metadata under the sha256 of its name', () => {
    const digest = createHash('sha256').update('colima').digest('hex');
    assert.equal(contextMetaPath('/h/.docker', 'colima'), `/h/.docker/contexts/meta/${digest}/meta.json`);
  });

  it('explains a selected context whose metadata is missing or names no endpoint', () => {
    assert.throws(
      () => resolveEndpoint({ env: {}, dockerConfigText: config('gone'), platform: 'linux' }),
      /current Docker context "gone" has no metadata file.*docker context use default.*toolbox\.dockerHost/,
    );
    assert.throws(
      () => resolveEndpoint({ env: {}, dockerConfigText: config('x'), contextMetaText: '{"Endpoints":{}}', platform: 'linux' }),
      /Docker context "x" names no Docker endpoint/,
    );
  });

  it('speaks TLS on port 2376 or with DOCKER_TLS_VERIFY and picks up DOCKER_CERT_PATH', () => {
    const r = resolveEndpoint({ env: { DOCKER_HOST: 'tcp://docker.example:2376', DOCKER_CERT_PATH: '/certs' }, platform: 'linux' });
    assert.deepEqual(r.options, { host: 'docker.example', port: 2376, protocol: 'https' });
    assert.equal(r.tlsDir, '/certs');
    const v = resolveEndpoint({ env: { DOCKER_HOST: 'tcp://h', DOCKER_TLS_VERIFY: '1' }, platform: 'linux' });
    assert.deepEqual(v.options, { host: 'h', port: 2376, protocol: 'https' });
  });

  it('accepts a bare host:port and an ssh endpoint', () => {
    assert.deepEqual(resolveEndpoint({ setting: '127.0.0.1:2375', env: {}, platform: 'linux' }).options, {
      host: '127.0.0.1',
      port: 2375,
      protocol: 'http',
    });
    assert.deepEqual(resolveEndpoint({ setting: 'ssh://me@box', env: {}, platform: 'linux' }).options, {
      protocol: 'ssh',
      host: 'box',
      port: 22,
      username: 'me',
    });
  });

  it('rejects an endpoint it cannot use with a sentence naming the fix', () => {
    assert.throws(
      () => resolveEndpoint({ setting: 'ftp://box', env: {}, platform: 'linux' }),
      /The Docker endpoint "ftp:\/\/box" \(from the toolbox\.dockerHost setting\) cannot be used: the scheme "ftp" is not supported/,
    );
    assert.throws(() => resolveEndpoint({ setting: 'unix://', env: {}, platform: 'linux' }), /has no socket path/);
  });
});

describe('unreachable', () => {
  const endpoint = resolveEndpoint({ env: { DOCKER_HOST: 'unix:///var/run/docker.sock' }, platform: 'linux' });

  it('says where, from which source, why in words, and what to do', () => {
    const err = unreachable(endpoint, Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    assert.equal(
      err.message,
      'Docker is not reachable at unix:///var/run/docker.sock (from DOCKER_HOST): connection refused — ' +
        'is the daemon running? Start Docker, or set toolbox.dockerHost.',
    );
  });

  it('turns a permission error into advice about the docker group', () => {
    const err = unreachable(endpoint, Object.assign(new Error('EACCES'), { code: 'EACCES' }));
    assert.match(err.message, /permission denied — .*docker group/);
  });

  it('asks to correct the setting, not to set it, when the setting chose the endpoint', () => {
    const fromSetting = resolveEndpoint({ setting: 'unix:///nope.sock', env: {}, platform: 'linux' });
    const err = unreachable(fromSetting, Object.assign(new Error('ENOENT'), { code: 'ENOENT' }));
    assert.match(err.message, /\(from the toolbox\.dockerHost setting\): no socket exists at \/nope\.sock .*correct toolbox\.dockerHost\./);
  });
});
