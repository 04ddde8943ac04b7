/**
 * Where Podman's Docker-compatible API answers differently (docs/engines.md): the pure rules that
 * turn its answers into Docker's spelling. The integration suite runs against both engines.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  familiarImageName,
  hostGatewayAddress,
  identityFromPingHeaders,
  identityFromVersion,
  rootlessUsernsMode,
  supportsHostGateway,
  withClassicBuilder,
  withHostGateway,
} from '../../extension/src/engine/compat';
import { hasDependents, isConflict, isNotFound, isVolumeTaken } from '../../extension/src/engine/errors';
import { buildStepProgress, parseBuildStep } from '../../extension/src/engine/imageProgress';
import { objectNames } from '../../extension/src/contract/objects';
import { pidModeDrift, storedPidMode } from '../../extension/src/plan/drift';

describe('engine identity', () => {
  it('tells Podman from Docker by /version components, and by /_ping headers', () => {
    assert.deepEqual(
      identityFromVersion({ Version: '4.3.1', ApiVersion: '1.41', Components: [{ Name: 'Podman Engine' }, { Name: 'Conmon' }] }),
      { product: 'Podman', version: '4.3.1', apiVersion: '1.41' },
    );
    assert.deepEqual(identityFromVersion({ Version: '20.10.24+dfsg1', ApiVersion: '1.41', Components: [{ Name: 'Engine' }] }), {
      product: 'Docker',
      version: '20.10.24+dfsg1',
      apiVersion: '1.41',
    });
    assert.deepEqual(identityFromPingHeaders({ 'api-version': '1.41', server: 'Libpod/4.3.1 (linux)' }), {
      product: 'Podman',
      version: '4.3.1',
      apiVersion: '1.41',
    });
    assert.deepEqual(identityFromPingHeaders({ 'api-version': '1.41', server: 'Docker/20.10.24+dfsg1 (linux)' }), {
      product: 'Docker',
      version: '20.10.24+dfsg1',
      apiVersion: '1.41',
    });
    assert.equal(identityFromPingHeaders({ 'api-version': '1.41' }), undefined, 'no Server header: ask /version');
    assert.equal(identityFromPingHeaders({ server: 'Docker/20.10.24 (linux)' }), undefined, 'no API version: ask /version');
    assert.equal(identityFromPingHeaders({ 'api-version': '1.41', server: 'nginx/1.25' }), undefined);
  });

  it('uses host-gateway on Docker and on Podman from 5.3 only', () => {
    const podman = (version: string) => ({ product: 'Podman' as const, version, apiVersion: '1.41' });
    assert.equal(supportsHostGateway({ product: 'Docker', version: '20.10.24', apiVersion: '1.41' }), true);
    assert.equal(supportsHostGateway(podman('4.3.1')), false);
    assert.equal(supportsHostGateway(podman('5.2.9')), false);
    assert.equal(supportsHostGateway(podman('5.3.0')), true);
    assert.equal(supportsHostGateway(podman('6.0.0')), true);
    assert.equal(supportsHostGateway(podman('')), false, 'an unknown Podman is treated as old');
  });

  it('replaces host-gateway by the address and leaves other entries alone', () => {
    assert.deepEqual(withHostGateway(['host.docker.internal:host-gateway', 'api.example.com:host-gateway', 'db:10.0.0.5'], '10.88.0.1'), [
      'host.docker.internal:10.88.0.1',
      'api.example.com:10.88.0.1',
      'db:10.0.0.5',
    ]);
  });
});

describe("Podman's answers in Docker's spelling", () => {
  it('shows image names as docker ps does', () => {
    assert.equal(familiarImageName('docker.io/library/debian:bookworm-slim'), 'debian:bookworm-slim');
    assert.equal(familiarImageName('docker.io/toolbox-vscode-test/runtime:e018d5a5e828'), 'toolbox-vscode-test/runtime:e018d5a5e828');
    assert.equal(familiarImageName('localhost/tbx/runtime:1'), 'tbx/runtime:1');
    assert.equal(familiarImageName('ghcr.io/owner/image:1'), 'ghcr.io/owner/image:1');
    assert.equal(familiarImageName('127.0.0.1:5000/x:1'), '127.0.0.1:5000/x:1');
    assert.equal(familiarImageName('debian:bookworm-slim'), 'debian:bookworm-slim');
  });

  it('reads PidMode "private" as the container\'s own namespace, so peer-off containers show no drift', () => {
    const names = objectNames('tbxu');
    assert.equal(storedPidMode('private'), '');
    assert.equal(storedPidMode(undefined), '');
    assert.equal(storedPidMode('container:abc'), 'container:abc');
    assert.equal(storedPidMode('host'), 'host');
    assert.equal(pidModeDrift(storedPidMode('private'), false, undefined, names), undefined);
    assert.deepEqual(pidModeDrift(storedPidMode('private'), true, 'abc', names), { kind: 'planned-on-but-outside' });
  });

  it("counts Podman's HTTP 500 for a taken name as a conflict, and nothing else that fails with 500", () => {
    const podman = Object.assign(new Error('(HTTP code 500) server error'), {
      statusCode: 500,
      json: {
        message:
          'creating container storage: the container name "tbx-ws-a" is already in use by 0f2c. You have to remove that container to be able to reuse that name: that name is already in use',
      },
    });
    assert.equal(isConflict(podman), true);
    assert.equal(isConflict({ statusCode: 409, json: { message: 'Conflict.' } }), true);
    assert.equal(isConflict({ statusCode: 500, json: { message: 'no space left on device' } }), false);
    assert.equal(isConflict({ statusCode: 404, json: { message: 'is already in use' } }), false);
  });

  it("counts Podman's half-removed container as not found, and nothing else of its 500s", () => {
    const err = (statusCode: number, message: string) => ({ statusCode, json: { message } });
    assert.equal(isNotFound(err(500, 'container 39725bb73ff0 does not exist in database: no such container')), true);
    assert.equal(isNotFound(err(404, 'No such container: tbx-x')), true);
    assert.equal(isNotFound(err(500, 'no space left on device')), false);
    assert.equal(isNotFound(err(409, 'no such container')), false);
  });

  it('tells a removal refused for dependent containers and a volume that exists from other failures', () => {
    const err = (statusCode: number, message: string) => ({ statusCode, json: { message } });
    assert.equal(
      hasDependents(err(500, 'container 5631 has dependent containers which must be removed before it: 1196: container already exists')),
      true,
    );
    assert.equal(hasDependents(err(500, 'driver failed')), false);
    assert.equal(isVolumeTaken(err(500, 'adding volume to state: name tbx-cc-socks is in use: volume already exists')), true);
    assert.equal(isVolumeTaken(err(500, 'no space left on device')), false);
  });

  it('on rootless Podman, maps the user to itself, and a member joins the user namespace of the PID namespace it joins', () => {
    assert.equal(rootlessUsernsMode(undefined), 'keep-id');
    assert.equal(rootlessUsernsMode(''), 'keep-id');
    assert.equal(rootlessUsernsMode('container:tbx-peer-anchor'), 'container:tbx-peer-anchor');
  });

  it("reads Buildah's STEP lines as build steps, so progress and the base image hint work", () => {
    assert.deepEqual(parseBuildStep('STEP 1/25: FROM debian:bookworm-slim'), { n: 1, of: 25, instruction: 'FROM debian:bookworm-slim' });
    assert.deepEqual(parseBuildStep('Step 1/25 : FROM debian:bookworm-slim'), { n: 1, of: 25, instruction: 'FROM debian:bookworm-slim' });
    assert.equal(parseBuildStep('--> a997176e518'), undefined);
    assert.equal(
      buildStepProgress('the runtime image', 'STEP 3/4: RUN true')?.message,
      'Building the runtime image: step 3 of 4 (RUN true)',
    );
  });

  it("reads Buildah's steps of a Dockerfile with several stages ([s/S] STEP n/m), which the runtime image has (decision 0049)", () => {
    assert.deepEqual(parseBuildStep('[2/2] STEP 3/14: RUN apt-get update'), {
      n: 3,
      of: 14,
      instruction: 'RUN apt-get update',
      stage: 2,
      stages: 2,
    });
    const p = buildStepProgress('the runtime image', '[2/2] STEP 3/10: RUN apt-get update');
    assert.equal(p?.message, 'Building the runtime image: stage 2 of 2, step 3 of 10 (RUN apt-get update)');
    assert.equal(p?.percent, 60);
    assert.equal(buildStepProgress('the runtime image', '[1/2] STEP 1/4: FROM debian AS docker-client')?.percent, 0);
  });
});

describe('withClassicBuilder: the docker CLI in a container with the scoped endpoint builds without BuildKit’s /grpc (issues 27, 38)', () => {
  const endpoint = 'DOCKER_HOST=unix:///run/toolbox-docker/docker.sock';
  it('adds DOCKER_BUILDKIT=0 to a container that has the scoped Docker endpoint', () => {
    assert.deepEqual(withClassicBuilder({ Env: ['A=1', endpoint] }).Env, ['A=1', endpoint, 'DOCKER_BUILDKIT=0']);
  });
  it('keeps the user’s own DOCKER_BUILDKIT, and leaves a container without the endpoint alone', () => {
    assert.deepEqual(withClassicBuilder({ Env: [endpoint, 'DOCKER_BUILDKIT=1'] }).Env, [endpoint, 'DOCKER_BUILDKIT=1']);
    assert.deepEqual(withClassicBuilder({ Env: ['A=1'] }).Env, ['A=1']);
    assert.deepEqual(withClassicBuilder({}), {});
  });
});

describe('hostGatewayAddress: where published ports listen for the workspace container (issue 38, item 6)', () => {
  const engine = (inspect: () => Promise<unknown>) =>
    ({ getNetwork: () => ({ inspect }) }) as unknown as Parameters<typeof hostGatewayAddress>[0];
  it('is the default bridge’s IPv4 gateway when it is an address of this machine', async () => {
    const config = {
      IPAM: {
        Config: [
          { Subnet: 'fd00::/64', Gateway: 'fd00::1' },
          { Subnet: '127.0.0.0/8', Gateway: '127.0.0.1' },
        ],
      },
    };
    assert.equal(await hostGatewayAddress(engine(async () => config)), '127.0.0.1');
  });
  it('is nothing when the gateway is no address here (a VM’s, a namespace’s), absent, or the engine fails', async () => {
    // 198.51.100.0/24 is TEST-NET-2: no machine has it.
    assert.equal(await hostGatewayAddress(engine(async () => ({ IPAM: { Config: [{ Gateway: '198.51.100.77' }] } }))), undefined);
    assert.equal(await hostGatewayAddress(engine(async () => ({ IPAM: { Config: null } }))), undefined);
    assert.equal(await hostGatewayAddress(engine(async () => ({}))), undefined);
    assert.equal(
      await hostGatewayAddress(
        engine(async () => {
          throw new Error('no such network');
        }),
      ),
      undefined,
    );
  });
});
