/**
 * A container registry on loopback for the pull-before-build tests (issue #14): Debian's
 * distribution registry started by scripts/ensure-registry.sh with its own config and storage in
 * a temporary directory, stopped again by the test that started it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { splitTag } from '../../extension/src/engine/imageBuild';
import { TEST_ENGINE } from './docker';
import { repoRoot } from './image';

export interface LoopbackRegistry {
  /** `127.0.0.1:<port>`, usable as a registry_mirror. */
  address: string;
  stop(): void;
}

export function startRegistry(prefix: string): LoopbackRegistry {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-registry-`));
  const script = join(repoRoot(), 'scripts', 'ensure-registry.sh');
  // The Podman pass uses the one port its test engine trusts over plain HTTP (scripts/ensure-podman.sh).
  const port = TEST_ENGINE === 'podman' ? (process.env.TOOLBOX_TEST_REGISTRY_PORT ?? '55055') : undefined;
  const env = port ? { ...process.env, REGISTRY_PORT: port } : process.env;
  const address = execFileSync('bash', [script, 'start', dir], { encoding: 'utf8', env }).trim();
  return {
    address,
    stop() {
      execFileSync('bash', [script, 'stop', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `docker push` through the Engine API; rejects with the engine's error text. */
export async function pushImage(d: Docker, ref: string): Promise<void> {
  // The engine wants an X-Registry-Auth header even for a registry without authentication.
  const stream = (await d.getImage(ref).push({ authconfig: {} } as object)) as NodeJS.ReadableStream;
  await new Promise<void>((resolve, reject) => {
    d.modem.followProgress(stream, (err: Error | null, events: { error?: string }[]) => {
      const failed = events?.find((e) => e.error);
      if (err) reject(err);
      else if (failed) reject(new Error(failed.error));
      else resolve();
    });
  });
}

const OCI = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: { os: string; architecture: string; variant?: string };
  annotations?: Record<string, string>;
}

/**
 * Replaces a single-platform image in a loopback registry by what `docker buildx build --platform
 * linux/amd64,linux/arm64 --push --provenance=mode=max --sbom=true` publishes
 * (.github/workflows/runtime-image.yml): an OCI image index whose platform manifests are this
 * image's (OCI media types; the other platform's config a copy with its architecture) and, for
 * each, an attestation manifest of platform unknown/unknown with an in-toto layer. Returns the
 * index's platform list.
 */
export async function republishAsMultiPlatformIndex(ref: string): Promise<string[]> {
  const { repo, tag } = splitTag(ref);
  const slash = repo.indexOf('/');
  const base = `http://${repo.slice(0, slash)}/v2/${repo.slice(slash + 1)}`;
  const ok = async (res: Response, what: string): Promise<Response> => {
    if (!res.ok) throw new Error(`${what}: ${res.status} ${await res.text()}`);
    return res;
  };
  const blob = async (data: Buffer, mediaType: string): Promise<Descriptor> => {
    const digest = `sha256:${createHash('sha256').update(data).digest('hex')}`;
    const start = await ok(await fetch(`${base}/blobs/uploads/`, { method: 'POST' }), 'start a blob upload');
    const location = new URL(start.headers.get('location')!, base);
    location.searchParams.set('digest', digest);
    await ok(
      await fetch(location, { method: 'PUT', body: data, headers: { 'content-type': 'application/octet-stream' } }),
      'upload a blob',
    );
    return { mediaType, digest, size: data.length };
  };
  const manifest = async (body: object, mediaType: string, reference?: string): Promise<Descriptor> => {
    const data = Buffer.from(JSON.stringify(body));
    const digest = `sha256:${createHash('sha256').update(data).digest('hex')}`;
    const url = `${base}/manifests/${reference ?? digest}`;
    await ok(
      await fetch(url, { method: 'PUT', body: data, headers: { 'content-type': mediaType } }),
      `put the manifest ${reference ?? digest}`,
    );
    return { mediaType, digest, size: data.length };
  };

  const v2 = (await (
    await ok(
      await fetch(`${base}/manifests/${tag}`, { headers: { accept: 'application/vnd.docker.distribution.manifest.v2+json' } }),
      'get the manifest',
    )
  ).json()) as { config: Descriptor; layers: Descriptor[] };
  const config = (await (await ok(await fetch(`${base}/blobs/${v2.config.digest}`), 'get the config')).json()) as { architecture: string };
  const layers = v2.layers.map((l) => ({ mediaType: OCI.layer, digest: l.digest, size: l.size }));
  const other = config.architecture === 'arm64' ? { architecture: 'amd64' } : { architecture: 'arm64', variant: 'v8' };
  const entries: Descriptor[] = [];
  for (const platform of [{ architecture: config.architecture }, other]) {
    const cfg = platform === other ? { ...config, ...other } : config;
    const cfgBlob = await blob(Buffer.from(JSON.stringify(cfg)), OCI.config);
    const image = await manifest({ schemaVersion: 2, mediaType: OCI.manifest, config: cfgBlob, layers }, OCI.manifest);
    const statement = Buffer.from(
      JSON.stringify({
        _type: 'https://in-toto.io/Statement/v0.1',
        predicateType: 'https://slsa.dev/provenance/v0.2',
        subject: [{ name: ref, digest: { sha256: image.digest.slice(7) } }],
        predicate: { buildType: 'https://mobyproject.org/buildkit@v1' },
      }),
    );
    const intoto = {
      ...(await blob(statement, 'application/vnd.in-toto+json')),
      annotations: { 'in-toto.io/predicate-type': 'https://slsa.dev/provenance/v0.2' },
    };
    const attConfig = await blob(
      Buffer.from(
        JSON.stringify({
          architecture: 'unknown',
          os: 'unknown',
          config: {},
          rootfs: { type: 'layers', diff_ids: [`sha256:${createHash('sha256').update(statement).digest('hex')}`] },
        }),
      ),
      OCI.config,
    );
    const attestation = await manifest({ schemaVersion: 2, mediaType: OCI.manifest, config: attConfig, layers: [intoto] }, OCI.manifest);
    entries.push({ ...image, platform: { os: 'linux', ...platform } });
    entries.push({
      ...attestation,
      platform: { os: 'unknown', architecture: 'unknown' },
      annotations: { 'vnd.docker.reference.digest': image.digest, 'vnd.docker.reference.type': 'attestation-manifest' },
    });
  }
  await manifest({ schemaVersion: 2, mediaType: OCI.index, manifests: entries }, OCI.index, tag);
  const served = await ok(
    await fetch(`${base}/manifests/${tag}`, { headers: { accept: `${OCI.index}, ${OCI.manifest}` } }),
    'get the index',
  );
  if (served.headers.get('content-type') !== OCI.index)
    throw new Error(`${ref} is served as ${served.headers.get('content-type')}, not an index`);
  return entries.map((e) => [e.platform!.os, e.platform!.architecture, e.platform!.variant].filter(Boolean).join('/'));
}
