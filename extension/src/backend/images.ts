/**
 * Our runtime image as this window builds and names it: the build args (with the user's extra
 * certificate authorities), its content-hash tag, where it may be pulled from first, and
 * Rebuild Runtime Image.
 */
import { join } from 'node:path';
import type * as vscode from 'vscode';
import { HOST } from '../contract/upstream';
import { RUNTIME_IMAGE_TEST_REPO } from '../contract/image';
import { extraCaCerts, publishedRuntimeImageRef, runtimeImageTag } from '../engine/imageBuild';
import { rebuildRuntimeImage } from '../engine/imageRebuild';
import type { RebuildSummary, SessionProgress } from './api';
import type { EngineConnector } from './connection';
import type { BackendSettings } from './settings';

export interface RuntimeImagesDeps {
  home: () => string;
  /** Directory holding images/runtime and shims: the runtime image's build context. */
  extensionPath: string;
  /** Extra image build args (tests: TOOLBOX_VSCODE_BUILD_ARGS, JSON). */
  buildArgs: Record<string, string>;
  /** Repository our runtime image is tagged in (tests use their own). */
  imageRepo?: string;
  settings: BackendSettings;
  connector: EngineConnector;
  log: Pick<vscode.LogOutputChannel, 'warn'>;
}

export class RuntimeImages {
  constructor(private readonly deps: RuntimeImagesDeps) {}

  get contextRoot(): string {
    return this.deps.extensionPath;
  }

  /**
   * Build args of our runtime image: the configured ones, plus the certificate authorities the
   * user added, so the build's downloads work behind a TLS-intercepting proxy: those in
   * ~/.toolbox/certs (upstream's certs dir) and, on Linux, the host's locally added ones
   * (/usr/local/share/ca-certificates, where such a proxy's CA is installed). A changed
   * certificate changes the tag and so rebuilds the image.
   */
  buildArgs(): Record<string, string> {
    const dirs = [join(this.deps.home(), HOST.mountsRoot, 'certs')];
    if (process.platform === 'linux') dirs.push(HOST.localCaDir);
    const certs = dirs.map((d) => extraCaCerts(d, (line) => this.deps.log.warn(line))).filter((c) => c !== undefined);
    return certs.length ? { ...this.deps.buildArgs, EXTRA_CA_CERTS: certs.join('\n') } : this.deps.buildArgs;
  }

  /** The tag our image has for these build args (a hash of the build context and the args). */
  tag(buildArgs: Record<string, string>): string {
    return runtimeImageTag(this.deps.extensionPath, buildArgs, this.deps.imageRepo);
  }

  /**
   * Where our runtime image may be pulled from before it is built (decision 0016), or undefined
   * when the toolbox.runtimeImage.pull setting is off.
   */
  pullRef(localTag: string, registryMirror: string | undefined): string | undefined {
    return this.deps.settings.pullRuntimeImage() ? publishedRuntimeImageRef(localTag, registryMirror) : undefined;
  }

  async rebuildRuntimeImage(options: { noCache: boolean }, progress: SessionProgress, signal: AbortSignal): Promise<RebuildSummary> {
    const buildArgs = this.buildArgs();
    const tag = this.tag(buildArgs);
    const { docker } = await this.deps.connector.engine();
    progress.log(`Rebuilding the toolbox runtime image ${tag}${options.noCache ? ' without the layer cache' : ''}…`);
    const result = await rebuildRuntimeImage(docker, {
      contextRoot: this.deps.extensionPath,
      tag,
      buildArgs,
      noCache: options.noCache,
      // Concurrent test runs share the test repository: a test rebuild prunes only what it replaced.
      pruneOtherTags: this.deps.imageRepo !== RUNTIME_IMAGE_TEST_REPO,
      onLog: (line) => progress.log(line),
      onProgress: (p) => progress.step(p.message, p.percent),
      signal,
    });
    return { tag, pruned: result.pruned, inUse: result.inUse };
  }
}
