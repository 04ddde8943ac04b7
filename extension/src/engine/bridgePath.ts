/**
 * Runs plan/bridgePath.ts's probe in a container: which path its shims take to the bridge.
 * Bounded: curl's own 2 s per try, and the whole exec by BRIDGE_PATH_TIMEOUT_MS.
 */
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { BRIDGE_PATH_PROBE, bridgePathFrom, type BridgePath } from '../plan/bridgePath';
import { CONTAINER } from '../contract/upstream';
import { demux } from './containers';
import { collectExecOutput } from './exec';

const BRIDGE_PATH_TIMEOUT_MS = 10_000;

/** `info`: the container's inspect when the caller has it (the Doctor's listing), else one is made. */
export async function probeBridgePath(docker: Docker, containerId: string, info?: Docker.ContainerInspectInfo): Promise<BridgePath> {
  const container = docker.getContainer(containerId);
  const inspected = info ?? (await container.inspect());
  const runDir = (inspected.Mounts ?? []).find((m) => m.Destination === CONTAINER.bridgeRunDir)?.Source;
  const exec = await container.exec({
    Cmd: ['sh', '-c', BRIDGE_PATH_PROBE],
    User: inspected.Config?.User ?? '',
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
  const { output, finished } = await collectExecOutput(stream, BRIDGE_PATH_TIMEOUT_MS);
  if (!finished) return { mode: 'none', why: `the probe in the container did not finish within ${BRIDGE_PATH_TIMEOUT_MS / 1000} s` };
  return bridgePathFrom(demux(output), runDir);
}
