/**
 * What Docker Desktop (and OrbStack, Colima) does for `host.docker.internal`: a connection to it
 * from a container reaches the host's loopback. A Linux engine's `host-gateway` is the bridge's
 * gateway address instead, where the bridge's loopback TCP listener (bridge/hub.ts) does not
 * answer. This relays one port from the address `host.docker.internal` has in a container to the
 * same port on 127.0.0.1, so the forced-TCP path (docs/decisions/0058-forced-fallback-transports.md)
 * runs on this machine's engine as it does on those. Tests only.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import type Docker from 'dockerode';
import { bridgePortCandidates } from '../../extension/src/bridge/hub';
import { execIn } from './exec';

export interface DesktopLoopback {
  /** Where the relay listens (`<host.docker.internal's address>:<port>`); undefined: none was needed. */
  readonly address: string | undefined;
  close(): Promise<void>;
}

/** The address `host.docker.internal` resolves to inside the container. */
export async function hostDockerInternal(container: Docker.Container): Promise<string> {
  const r = await execIn(container, ['getent', 'ahostsv4', 'host.docker.internal']);
  const ip = /^(\d+\.\d+\.\d+\.\d+)\s/m.exec(r.stdout)?.[1];
  if (!ip) throw new Error(`host.docker.internal does not resolve in the container: ${r.stdout}${r.stderr}`);
  return ip;
}

/**
 * Relays `port` from host.docker.internal's address (as the container sees it) to 127.0.0.1, and
 * every other port the bridge may take (bridgePortCandidates: a reloaded window binds the next one
 * while the window before it still holds the first), as Docker Desktop forwards any port. An
 * address that is not this host's (rootless Podman's slirp4netns gateway already forwards to the
 * host's loopback) needs no relay. A candidate another relay already listens on is left to it.
 */
export async function desktopLoopback(container: Docker.Container, port: number): Promise<DesktopLoopback> {
  const ip = await hostDockerInternal(container);
  const sockets = new Set<Socket>();
  const servers: Server[] = [];
  const relayTo = (target: number): Server =>
    createServer((inbound) => {
      const outbound = connect(target, '127.0.0.1');
      for (const s of [inbound, outbound]) {
        sockets.add(s);
        s.on('close', () => sockets.delete(s));
        s.on('error', () => (s === inbound ? outbound : inbound).destroy());
      }
      inbound.pipe(outbound).pipe(inbound);
    });
  const listen = (server: Server, target: number): Promise<'listening' | 'not-here' | 'taken'> =>
    new Promise((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) =>
        err.code === 'EADDRNOTAVAIL' ? resolve('not-here') : err.code === 'EADDRINUSE' && target !== port ? resolve('taken') : reject(err),
      );
      server.listen(target, ip, () => resolve('listening'));
    });
  const first = relayTo(port);
  const listened = (await listen(first, port)) === 'listening';
  if (listened) {
    servers.push(first);
    for (const candidate of bridgePortCandidates()) {
      if (candidate === port) continue;
      const server = relayTo(candidate);
      if ((await listen(server, candidate)) === 'listening') servers.push(server);
    }
  }
  return {
    address: listened ? `${ip}:${port}` : undefined,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
}
