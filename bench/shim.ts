/**
 * `code <file>` end to end: the real shim in a container of the runtime image, through the
 * bridge's unix socket, to the editor-open handler — against the floor of the same exec running
 * `true`. Interleaved; the difference is what the shim and the bridge add.
 */
import { chownSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BRIDGE_FILES, ENV } from '../extension/src/contract/shims';
import { CONTAINER } from '../extension/src/contract/upstream';
import { startRig } from '../test/bridge/support';
import { testNamespace } from '../test/support/docker';
import { ensureTestRuntimeImage } from '../test/support/image';
import { fmtMs, interleave, spreadOf, type ResultRow } from './harness';

export async function benchShim(): Promise<ResultRow[]> {
  const ns = testNamespace();
  const rig = await startRig({ prepare: ({ workspace }) => writeFileSync(join(workspace, 'hello.txt'), 'hello\n') });
  try {
    const { stateDir, runDir, socketPath } = rig.bridge;
    // The container user stands in for the host uid, which owns the bridge files in production.
    for (const p of [stateDir, join(stateDir, BRIDGE_FILES.token), join(stateDir, BRIDGE_FILES.port), runDir, socketPath])
      chownSync(p, 1000, 1000);
    const container = await ns.docker.createContainer({
      name: `${ns.names.prefix}-shim-bench`,
      Image: await ensureTestRuntimeImage(),
      User: '1000:1000',
      Env: [`${ENV.hostWorkspace}=${rig.workspace}`],
      HostConfig: {
        Binds: [`${stateDir}:${CONTAINER.bridgeDir}:ro`, `${runDir}:${CONTAINER.bridgeRunDir}`, `${rig.workspace}:${CONTAINER.workspace}`],
        NetworkMode: 'none',
      },
    });
    await container.start();
    const execToEnd = async (cmd: string[]) => {
      const exec = await container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
      const stream = await exec.start({ hijack: true, stdin: false });
      await new Promise<void>((resolve) => {
        stream.on('end', resolve);
        stream.on('close', resolve);
        stream.resume();
      });
    };
    const res = await interleave(
      {
        shim: async () => {
          const before = rig.recorded.edits.length;
          await execToEnd(['code', '/workspace/hello.txt']);
          if (rig.recorded.edits.length !== before + 1) throw new Error('`code` did not reach the editor-open handler');
        },
        floor: () => execToEnd(['true']),
      },
      { rounds: 15, warmup: 2 },
    );
    const shim = res.shim!;
    const floor = res.floor!;
    return [
      {
        benchmark: 'Bridge end to end',
        measure: '`code <file>` in the container → editor-open handler (exec to end)',
        value: `${fmtMs(shim.median)}: +${fmtMs(shim.median - floor.median)} over an exec of \`true\` (${fmtMs(floor.median)}), ${(shim.median / floor.median).toFixed(2)}×`,
        spread: spreadOf(shim),
        goal: '–',
        met: undefined,
      },
    ];
  } finally {
    await ns.cleanup();
    await rig.cleanup();
  }
}
