/**
 * Runs plan/bridgePath.ts's probe in a container: which path its shims take to the bridge.
 * Bounded: curl's own 2 s per try, and the whole exec by BRIDGE_PATH_TIMEOUT_MS.
 */
import type Docker from 'dockerode';
import type { Duplex } from 'node:stream';
import { BRIDGE_PATH_PROBE, bridgePathFrom, type BridgePath } from '../plan/bridgePath';
import { CONTAINER } from '../contract/constants';
import { demux } from './containers';

const BRIDGE_PATH_TIMEOUT_MS = 10_000;

export async function probeBridgePath(docker: Docker, containerId: string): Promise<BridgePath> {
  const container = docker.getContainer(containerId);
  const info = await container.inspect();
  const runDir = (info.Mounts ?? []).find((m) => m.Destination === CONTAINER.bridgeRunDir)?.Source;
  const exec = await container.exec({
    Cmd: ['sh', '-c', BRIDGE_PATH_PROBE],
    User: info.Config?.User ?? '',
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const stream = (await exec.start({ hijack: true, stdin: false })) as Duplex;
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on('data', (c: Buffer) => {
    if (size < 4096) chunks.push(c);
    size += c.length;
  });
  const finished = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => (stream.destroy(), resolve(false)), BRIDGE_PATH_TIMEOUT_MS);
    const done = () => (clearTimeout(timer), resolve(true));
    stream.once('end', done);
    stream.once('close', done);
    stream.once('error', done);
  });
  if (!finished) return { mode: 'none', why: `the probe in the container did not finish within ${BRIDGE_PATH_TIMEOUT_MS / 1000} s` };
  return bridgePathFrom(demux(Buffer.concat(chunks)), runDir);
}
