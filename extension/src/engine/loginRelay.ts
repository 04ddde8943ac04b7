/**
 * One connection into a container's own loopback (issue 29): an exec running a few lines of
 * python3 that connect to 127.0.0.1:<port> inside the container and pipe stdin and stdout to it,
 * through the engine's hijacked exec stream (the holder's exec transport does the same,
 * engine/sessions.ts `execTransport`). It needs nothing published and no container restart, so it
 * works on Docker and on rootful and rootless Podman alike; the exec shares the container's network
 * namespace, so its 127.0.0.1 is the one the login CLI listens on.
 */
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { execByteStream } from './exec';
import { LOGIN_FORWARD } from '../contract/constants';

/**
 * The relay: connect (bounded), then copy both ways until the container's side closes. After the
 * host side ends (stdin at EOF) it half-closes and waits at most relayDrainSeconds for the rest of
 * the answer, so an exec never outlives its connection for long. Exit 3: nothing listens there.
 */
export const RELAY_SCRIPT = `
import os, socket, sys, threading
port, connect_s, drain_s = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
try:
    s = socket.create_connection(("127.0.0.1", port), timeout=connect_s)
except OSError as e:
    sys.stderr.write("nothing answers on 127.0.0.1:%d in the container (%s)\\n" % (port, e.strerror or e))
    sys.exit(3)
s.settimeout(None)
def up():
    while True:
        b = os.read(0, 65536)
        if not b:
            break
        s.sendall(b)
    s.settimeout(drain_s)
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass
threading.Thread(target=up, daemon=True).start()
out = sys.stdout.buffer
try:
    while True:
        b = s.recv(65536)
        if not b:
            break
        out.write(b)
        out.flush()
except (OSError, socket.timeout):
    pass
`;

/** The exec's command: python3 with the relay, the port and its bounds as separate arguments. */
export function relayCommand(port: number): string[] {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`not a port: ${port}`);
  return ['python3', '-c', RELAY_SCRIPT, String(port), String(LOGIN_FORWARD.relayConnectSeconds), String(LOGIN_FORWARD.relayDrainSeconds)];
}

/**
 * Opens one relay in `containerId` to its 127.0.0.1:`port`: a Duplex whose writes reach the
 * container's listener and whose reads are its answer. `onError` gets the relay's own complaint
 * (its stderr, bounded) when there is one.
 */
export async function openLoginRelay(docker: Docker, containerId: string, port: number, onError?: (text: string) => void): Promise<Duplex> {
  const exec = await docker.getContainer(containerId).exec({
    Cmd: relayCommand(port),
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    Tty: false,
  });
  const raw = (await exec.start({ hijack: true, stdin: true })) as Duplex;
  let said = '';
  // The relay half-closes on the host side's EOF (final → stdin end) and waits for the rest.
  return execByteStream(docker, raw, {
    onStderr: (chunk) => {
      if (said.length < LOGIN_FORWARD.relayErrorChars) said += chunk.toString('utf8');
    },
    onEnd: () => {
      const text = said.trim().slice(0, LOGIN_FORWARD.relayErrorChars);
      if (text !== '') onError?.(text);
    },
  });
}
