/**
 * Issue 38, items 2 and 3: what a workspace container's Docker endpoint proves an object is its own
 * by, against the real engine, each attack made from a real container through its endpoint.
 *
 * - Item 2: the gate checked `?container=<ref>` at the request head and forwarded the same
 *   reference. The engine resolves a reference as a full id, then an exact name, then a unique id
 *   prefix: with its own container named like a prefix of another's id, a commit whose body is
 *   held back while that container is removed committed the other container. Now the id the check
 *   resolved is forwarded. The race is driven step by step: the head is sent, the gate's check is
 *   awaited, the container removed, and only then the body sent.
 * - Item 3: ownership inherited from images. The engine copies an image's labels into every
 *   container made from it, so an image carrying the owner label made the host's containers look
 *   like the workspace's own, and a tag, build or commit could take a name the host uses. Now
 *   images made through the endpoint carry an image label (the owner label set empty), names are
 *   the workspace's own only under localhost/<workspace container>/, and a container whose owner
 *   label came from its image is nobody's.
 *
 * Runs against Podman too (scripts/test-podman.sh: TOOLBOX_TEST_ENGINE=podman).
 */
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type Docker from 'dockerode';
import { DOCKER_ENDPOINT } from '../../extension/src/contract/dockerEndpoint';
import { LABELS } from '../../extension/src/contract/upstream';
import { type DockerEndpoint, type EndpointGate } from '../../extension/src/engine/dockerEndpoint/server';
import { policyGate } from '../../extension/src/engine/dockerEndpoint/gate';
import { TEST_LABEL, testNamespace } from '../support/docker';
import { BASE_IMAGE, endpointRig } from '../support/endpointRig';
import type { Run } from '../support/run';

const OWN = LABELS.dockerOwner;
const IMAGE_OWN = LABELS.dockerImageOwner;

/**
 * A client in the container (perl is in debian's base) that sends a request head to the endpoint,
 * waits until `go` exists in the folder, then sends the body and prints the answer's status line.
 */
const HELD_BODY = String.raw`
use IO::Socket::UNIX; use Time::HiRes qw(sleep);
my ($target, $body, $go) = @ARGV;
my $s = IO::Socket::UNIX->new(Peer => '${DOCKER_ENDPOINT.containerSocket}') or die "connect: $!";
$s->autoflush(1);
print $s "POST $target HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\nContent-Length: " . length($body) . "\r\n\r\n";
for (my $i = 0; $i < 1200 && ! -e $go; $i++) { sleep 0.05; }
print $s $body;
my $line = <$s>; print $line;
`;

describe('a Docker endpoint forwards what it checked, and no image makes another’s container its own (issue 38, items 2 and 3)', () => {
  const ns = testNamespace();
  const prefix = ns.names.prefix;
  const d: Docker = ns.docker;
  const name = (suffix: string) => `${prefix}-${suffix}`;
  const owner = name('ws');
  /** The workspace's image names (plan/dockerEndpoint/routes.ts imageNamespace). */
  const own = (image: string) => `localhost/${owner}/${image}`;
  const rig = endpointRig(ns, owner);
  const { runRoot, folder } = rig;
  const victim = name('victim');
  /** An image name the host uses (a tag of the base image the test makes, standing in for debian's own). */
  const hostTag = `${name('hostimg')}:1`;
  /** Called with each request target once the gate has judged its head. */
  let judged: (target: string) => void = () => undefined;
  let endpoint: DockerEndpoint;

  const { host, inside } = rig;
  const works = (r: Run, what: string): string => {
    assert.equal(r.code, 0, `${what}: ${r.stderr}`);
    return r.stdout;
  };
  const refusedBy = (r: Run, rule: string, what: string): void => {
    assert.notEqual(r.code, 0, `${what} passed: ${r.stdout}`);
    assert.match(r.stderr, new RegExp(`\\(rule ${rule}\\)`), `${what}: ${r.stderr}`);
  };

  before(async () => {
    await rig.requireBaseImage();
    const gate = policyGate({ docker: d, scope: rig.scope });
    const watched: EndpointGate = {
      head: async (req) => {
        const answer = await gate.head(req);
        judged(req.target);
        return answer;
      },
    };
    endpoint = await rig.startEndpoint(watched);
    await Promise.all([
      rig.startSleeper(owner, rig.workspaceContainer()),
      // Another workspace's container, with something in its environment.
      rig.startSleeper(victim, rig.asUser(['VICTIM_SECRET=from-the-other-workspace'])),
      d.getImage(BASE_IMAGE).tag({ repo: name('hostimg'), tag: '1' }),
    ]);
  });

  after(async () => {
    await endpoint?.close();
    await rig.removeLabelled('containers', OWN);
    await ns.cleanup();
    await rig.removeLabelled('images', IMAGE_OWN);
    await d
      .getImage(hostTag)
      .remove()
      .catch(() => undefined);
    rmSync(runRoot, { recursive: true, force: true });
  });

  it('commits the container it checked, not another whose id its name prefixes, when the body comes after a removal', async () => {
    const victimId = (await d.getContainer(victim).inspect()).Id;
    // Its own container, named like the start of the other's id.
    const short = victimId.slice(0, 12);
    works(await inside(['create', '--name', short, BASE_IMAGE, 'true']), 'create the look-alike');
    const target = `/v1.41/commit?container=${short}&repo=${encodeURIComponent(own('loot'))}`;
    const go = join(folder, 'go');
    const headJudged = new Promise<void>((resolve) => {
      judged = (t) => t.startsWith('/v1.41/commit?') && resolve();
    });
    const client = host(['exec', owner, 'perl', '-e', HELD_BODY, target, '{}', '/workspace/go']);
    await headJudged;
    // On a second connection, while the first holds its body back.
    works(await inside(['rm', '-f', short]), 'remove the look-alike');
    writeFileSync(go, '');
    const answer = await client;
    assert.equal(answer.code, 0, answer.stderr);
    assert.doesNotMatch(answer.stdout, /^HTTP\/1\.1 20\d/, `the commit went through: ${answer.stdout}`);
    const loot = await d
      .getImage(own('loot'))
      .inspect()
      .catch(() => undefined);
    assert.equal(loot, undefined, `an image was committed: ${JSON.stringify(loot?.Config.Env)}`);
    assert.ok(existsSync(go));
  });

  it('tags, builds and commits only under its own names, never onto one the host uses', async () => {
    const before = (await d.getImage(hostTag).inspect()).Id;
    works(await inside(['run', '--name', name('child'), BASE_IMAGE, 'sh', '-c', 'echo agent > /agent']), 'run a child');
    refusedBy(await inside(['commit', name('child'), hostTag]), 'image-name', 'commit onto the host’s tag');
    refusedBy(await inside(['tag', BASE_IMAGE, hostTag]), 'image-name', 'tag onto the host’s tag');
    writeFileSync(join(folder, 'Dockerfile'), `FROM ${BASE_IMAGE}\nRUN echo agent > /agent\n`);
    refusedBy(await inside(['build', '-t', hostTag, '/workspace'], { DOCKER_BUILDKIT: '0' }), 'image-name', 'build onto the host’s tag');
    assert.equal((await d.getImage(hostTag).inspect()).Id, before, 'the host’s tag still names its image');

    works(await inside(['commit', name('child'), own('snap:1')]), 'commit under its own name');
    const snap = await d.getImage(own('snap:1')).inspect();
    assert.equal(snap.Config.Labels?.[IMAGE_OWN], owner, 'the image carries the image label');
    assert.ok(!snap.Config.Labels?.[OWN], `the owner label is not carried into the image: ${JSON.stringify(snap.Config.Labels)}`);
    works(await inside(['tag', own('snap:1'), own('snap:2')]), 'tag under its own name');
    assert.equal(works(await inside(['run', '--rm', own('snap:2'), 'cat', '/agent']), 'run its own image'), 'agent\n');
  });

  it('takes no container the host made from its image for its own', async () => {
    // The host runs the workspace's image (by its name, or because it once took a name the host uses).
    works(
      await host(['create', '--name', name('hostrun'), '--label', `${TEST_LABEL}=${prefix}`, own('snap:1'), 'sleep', '60']),
      'host create',
    );
    works(await host(['start', name('hostrun')]), 'host start');
    const r = await inside(['exec', name('hostrun'), 'true']);
    assert.notEqual(r.code, 0, 'exec into the host’s container passed');
    assert.match(r.stderr, /No container|No such container/, r.stderr);
  });

  it('takes no container for its own whose owner label came from its image, and makes none from such an image', async () => {
    // A Dockerfile can set any label: the endpoint never sees inside the build context.
    writeFileSync(join(folder, 'Dockerfile'), `FROM ${BASE_IMAGE}\nLABEL ${OWN}=${owner}\n`);
    works(
      await inside(['build', '-t', own('labelled'), '/workspace'], { DOCKER_BUILDKIT: '0' }),
      'build an image that sets the owner label',
    );
    assert.equal((await d.getImage(own('labelled')).inspect()).Config.Labels?.[OWN], owner);
    works(
      await host(['create', '--name', name('inherits'), '--label', `${TEST_LABEL}=${prefix}`, own('labelled'), 'sleep', '60']),
      'host create',
    );
    works(await host(['start', name('inherits')]), 'host start');
    assert.equal((await d.getContainer(name('inherits')).inspect()).Config.Labels[OWN], owner, 'the engine copied the label');
    const exec = await inside(['exec', name('inherits'), 'true']);
    assert.notEqual(exec.code, 0, 'exec into a container whose owner label came from its image passed');
    refusedBy(await inside(['stop', name('inherits')]), 'not-owned', 'stop it');
    refusedBy(await inside(['create', own('labelled'), 'true']), 'owner-image', 'create from the image');
  });
});
