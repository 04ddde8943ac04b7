/**
 * The rule for "the engine is on another machine" (engine/remote.ts, decision 0035) and the
 * refusal an open of a local folder gets there.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveEndpoint, tlsReason } from '../../extension/src/engine/client';
import { engineLocality, remoteFolderError, remoteFolderRefusal, sameHostName } from '../../extension/src/engine/remote';
import { errorActions, errorCode } from '../../extension/src/contract/errors';

const at = (endpoint: string) => resolveEndpoint({ setting: endpoint, env: {}, platform: 'linux' });

describe('engineLocality', () => {
  it('a socket is this machine’s whatever the engine calls itself (Docker Desktop’s VM says docker-desktop)', () => {
    assert.deepEqual(engineLocality(at('unix:///var/run/docker.sock'), 'docker-desktop', 'laptop'), { remote: false });
    assert.deepEqual(engineLocality(at('npipe:////./pipe/docker_engine'), 'docker-desktop', 'laptop'), { remote: false });
  });

  it('ssh:// or tcp:// to an engine that names this machine is not remote (loopback to the local engine)', () => {
    assert.deepEqual(engineLocality(at('ssh://me@127.0.0.1:2222'), 'laptop', 'laptop'), { remote: false });
    assert.deepEqual(engineLocality(at('tcp://127.0.0.1:2375'), 'LAPTOP', 'laptop'), { remote: false });
    assert.deepEqual(engineLocality(at('tcp://laptop.lan:2376'), 'laptop.lan.', 'laptop'), { remote: false }, 'FQDN vs short name');
  });

  it('ssh:// or tcp:// to an engine that names another machine is remote', () => {
    assert.deepEqual(engineLocality(at('ssh://me@build'), 'build-01', 'laptop'), {
      remote: true,
      engineHost: 'build-01',
      localHost: 'laptop',
    });
    assert.deepEqual(engineLocality(at('tcp://10.0.0.5:2376'), ' far ', 'laptop'), {
      remote: true,
      engineHost: 'far',
      localHost: 'laptop',
    });
  });

  it('an engine that gives no name is taken as this machine’s (nothing says otherwise)', () => {
    assert.deepEqual(engineLocality(at('tcp://10.0.0.5:2375'), undefined, 'laptop'), { remote: false });
    assert.deepEqual(engineLocality(at('tcp://10.0.0.5:2375'), '  ', 'laptop'), { remote: false });
  });
});

describe('sameHostName', () => {
  it('compares without case or a trailing dot, and a short name matches its own FQDN only', () => {
    assert.ok(sameHostName('Box', 'box.'));
    assert.ok(sameHostName('box', 'box.example.com'));
    assert.ok(!sameHostName('box', 'boxer.example.com'));
    assert.ok(!sameHostName('box.a.com', 'box.b.com'));
    assert.ok(!sameHostName('', ''));
  });
});

describe('remoteFolderRefusal', () => {
  it('names the folder, the engine and its machine, why a bind mount cannot work, and both ways out', () => {
    const text = remoteFolderRefusal('/home/me/project', 'ssh://me@build', { remote: true, engineHost: 'build-01', localHost: 'laptop' });
    assert.equal(
      text,
      'Toolbox cannot open /home/me/project in a container: the Docker engine at ssh://me@build runs on another machine (build-01; this one is laptop). ' +
        "The container gets the folder as a bind mount, and a bind mount takes the path on the engine's machine, where this folder does not exist " +
        "(Docker would make an empty one there). Open the folder on build-01 with VS Code Remote-SSH, where Toolbox uses that machine's engine, " +
        'or pick an engine on this machine (Toolbox: Select Engine…). Nothing was created.',
    );
  });

  it('gets the Select Engine… button, not Open Setting', () => {
    const locality = { remote: true, engineHost: 'far', localHost: 'here' } as const;
    const err = remoteFolderError('/p', 'tcp://10.0.0.5:2376', locality);
    assert.equal(err.message, remoteFolderRefusal('/p', 'tcp://10.0.0.5:2376', locality));
    assert.equal(errorCode(err), 'engine-remote');
    assert.deepEqual(errorActions(err), ['select-engine']);
    assert.deepEqual(errorActions(new Error('Docker is not reachable at unix:///x: connection refused.')), []);
  });
});

describe('tlsReason', () => {
  const tls = resolveEndpoint({ setting: 'tcp://10.0.0.5:2376', env: {}, dockerConfigDir: '/home/me/.docker', platform: 'linux' });

  it('says whose certificate failed and which files to fix', () => {
    const server = tlsReason(
      Object.assign(new Error('unable to verify the first certificate'), { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' }),
      tls,
    );
    assert.equal(server?.short, "the engine's certificate was not accepted (UNABLE_TO_VERIFY_LEAF_SIGNATURE)");
    assert.match(server!.long, /not signed by the ca\.pem in \/home\/me\/\.docker, or does not name 10\.0\.0\.5/);
    const client = tlsReason(new Error('...:SSL routines:ssl3_read_bytes:sslv3 alert bad certificate:...'), tls);
    assert.match(client!.long, /the engine refused this client's TLS certificate \(cert\.pem and key\.pem in \/home\/me\/\.docker\)/);
    const plain = tlsReason(
      Object.assign(new Error('(HTTP code 400) bad request - Client sent an HTTP request to an HTTPS server.'), { statusCode: 400 }),
      tls,
    );
    assert.equal(plain?.short, 'the engine expects TLS');
    assert.equal(tlsReason(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), tls), undefined);
  });
});
