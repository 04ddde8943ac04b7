/**
 * The engine backend as a window makes it, for the engine tests and benchmarks that drive it
 * whole: the test image repository and build args, a silent log, an editor that opens nothing,
 * and this process's user with `home` as the host home. The vscode stand-in is installed first
 * (the backend imports vscode).
 */
import { protectedPathFacts } from '../../extension/src/backend/hostFacts';
import type { CreateEngineBackendOptions, createEngineBackend as CreateEngineBackend } from '../../extension/src/backend/engineBackend';
import { RUNTIME_IMAGE_TEST_REPO } from '../../extension/src/contract/image';
import type { HostFacts, ObjectNames } from '../../extension/src/contract/types';
import { repoRoot, TEST_BUILD_ARGS } from './image';
import { installVscodeLite, silentLog } from './vscodeLite';

export type TestBackend = ReturnType<typeof CreateEngineBackend>;

export function testBackend(
  names: ObjectNames,
  home: string,
  more: Partial<CreateEngineBackendOptions> & { pathExists?: HostFacts['pathExists'] } = {},
): TestBackend {
  installVscodeLite();
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { createEngineBackend } =
    require('../../extension/src/backend/engineBackend') as typeof import('../../extension/src/backend/engineBackend');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const { pathExists = () => false, ...options } = more;
  // The protected paths (on unless a test's settings turn them off) are read from this host, as a window does.
  const host: HostFacts = {
    uid: process.getuid!(),
    gid: process.getgid!(),
    home,
    platform: process.platform,
    pathExists,
    ...protectedPathFacts(),
  };
  return createEngineBackend({
    names,
    host: () => host,
    extensionPath: repoRoot(),
    buildArgs: TEST_BUILD_ARGS,
    imageRepo: RUNTIME_IMAGE_TEST_REPO,
    log: silentLog as never,
    editor: { openInEditor: () => undefined, openUntitled: () => undefined, openExternal: () => undefined },
    ...options,
  });
}
