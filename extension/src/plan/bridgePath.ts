/**
 * Which path a container's shims take to the bridge, from what a probe in the container saw
 * (engine/bridgePath.ts runs it): the bridge's unix socket in the run dir, TCP through
 * host.docker.internal (Docker Desktop's path, or forced by toolbox.transport.bridge; see
 * docs/decisions/0058-forced-fallback-transports.md), or neither. Pure: no I/O.
 */
import { BRIDGE_FILES, BRIDGE_TCP_ONLY_DIR, ROUTES } from '../contract/shims';
import { CONTAINER, HOST_DOCKER_INTERNAL } from '../contract/upstream';
import { SETTINGS } from '../contract/manifest';

export interface BridgePath {
  mode: 'unix' | 'tcp' | 'none';
  why: string;
}

/**
 * The probe, as `sh -c` in the container as its user: the shims' own order (shims/bridge-lib.sh),
 * each with curl's status (`000`: nothing answered) or `none` when there is nothing to try.
 * Any HTTP status proves a bridge answered there; /healthz needs no token.
 */
export const BRIDGE_PATH_PROBE = [
  `s=${CONTAINER.bridgeRunDir}/${BRIDGE_FILES.socket}`,
  `p=$(head -c 16 ${CONTAINER.bridgeDir}/${BRIDGE_FILES.port} 2>/dev/null | tr -cd 0-9)`,
  "c() { curl -q -s --noproxy '*' -o /dev/null -w '%{http_code}' --max-time 2 \"$@\" || true; }",
  `u=none; [ -S "$s" ] && u=$(c --unix-socket "$s" http://localhost${ROUTES.healthz})`,
  `t=none; [ -n "$p" ] && t=$(c "http://${HOST_DOCKER_INTERNAL}:$p${ROUTES.healthz}")`,
  'echo "unix=$u tcp=$t port=$p"',
].join('\n');

const PROBE_LINE = /^unix=(none|\d{3}) tcp=(none|\d{3}) port=(\d{0,5})$/;

/**
 * The path, from the probe's output (hostile: only the one line it prints is read) and the
 * container's run-dir mount source (`tcp-only` when it was made with toolbox.transport.bridge `tcp`).
 */
export function bridgePathFrom(output: string, runDirSource: string | undefined): BridgePath {
  const line = output.slice(0, 200).trim().split('\n').pop() ?? '';
  const m = PROBE_LINE.exec(line);
  if (!m) return { mode: 'none', why: 'the probe in the container gave no answer (no sh or curl in its image?)' };
  const [, unix, tcp, port] = m as unknown as [string, string, string, string];
  const answered = (status: string) => status !== 'none' && status !== '000';
  const forced = runDirSource !== undefined && runDirSource.replace(/\/+$/, '').endsWith(`/${BRIDGE_TCP_ONLY_DIR}`);
  if (answered(unix)) return { mode: 'unix', why: 'the bridge socket in the container’s run dir answers' };
  const noSocket =
    unix === 'none'
      ? forced
        ? `the container was made with ${SETTINGS.bridgeTransport} set to tcp, so it has no bridge socket`
        : 'the container has no bridge socket (its run dir is not mounted, or its file sharing cannot pass one)'
      : 'the bridge socket in the container does not answer (a file sharing that cannot pass a socket)';
  if (answered(tcp)) return { mode: 'tcp', why: `${noSocket}; ${HOST_DOCKER_INTERNAL}:${port} answers` };
  const tcpWhy =
    tcp === 'none'
      ? 'and it has no bridge port file'
      : `and nothing answers on ${HOST_DOCKER_INTERNAL}:${port} (a Linux engine's host.docker.internal does not reach this machine's loopback)`;
  return { mode: 'none', why: `${noSocket}, ${tcpWhy}` };
}
