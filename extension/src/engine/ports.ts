/**
 * The host-port preflight of the create path: a planned host port published by another
 * container, or held by a process on this machine, fails the open with the name of whoever
 * holds it (on Linux, the process read from /proc).
 */
import { readFile, readdir, readlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { bareName } from '../contract/objects';
import { plannedPorts } from '../plan/drift';
import type { SessionPlan } from '../plan/types';
import type { EngineContext } from './context';

/**
 * Pre-flight for the create path: a planned host port published by another container, or held
 * by a process on this machine, fails the open with the name of whoever holds it.
 */
export async function checkPortsFree(ctx: EngineContext, plan: SessionPlan): Promise<void> {
  // Only a fixed host port can be checked ahead; Docker picks one in a range, or any free one.
  const ports = plannedPorts(plan)
    .filter((p) => /^[0-9]+$/.test(p.hostPort) && Number(p.hostPort) > 0)
    .map((p) => ({ ...p, hostPort: Number(p.hostPort) }));
  if (ports.length === 0) return;
  const running = await ctx.docker.listContainers();
  for (const p of ports) {
    const holder = running.find((c) =>
      (c.Ports ?? []).some((cp) => cp.PublicPort === p.hostPort && (cp.Type ?? 'tcp') === p.protocol && ipsOverlap(cp.IP, p.hostIp)),
    );
    if (holder) {
      const holderName = bareName(holder.Names[0] ?? holder.Id);
      if (holderName === plan.name) continue;
      const stop = ctx.names.isOurs(holderName, holder.Labels) ? `\`toolbox stop ${holderName}\`` : `\`docker stop ${holderName}\``;
      throw new Error(
        `Port ${p.hostIp}:${p.hostPort} is already published by the container ${holderName}. ` +
          `Stop it with ${stop}, or choose another port for this workspace.`,
      );
    }
    if (p.protocol !== 'tcp') continue;
    const inUse = await tcpPortInUse(p.hostIp, p.hostPort);
    if (inUse) {
      const owner = await describePortOwner(p.hostPort);
      throw new Error(
        `Port ${p.hostIp}:${p.hostPort} is already in use on this machine${owner ? ` by ${owner}` : ''}. ` +
          `Stop ${owner ? 'it' : 'whatever holds it'}, or choose another port for this workspace.`,
      );
    }
  }
}

function ipsOverlap(published: string | undefined, planned: string): boolean {
  const any = (ip: string | undefined) => !ip || ip === '0.0.0.0' || ip === '::';
  return any(published) || any(planned) || published === planned;
}

function tcpPortInUse(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EADDRINUSE' || err.code === 'EACCES'));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(false)));
  });
}

/** Linux only, best effort: `<command> (pid N)` for the process listening on a TCP port. */
async function describePortOwner(port: number): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  try {
    const inodes = new Set<string>();
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      const text = await readFile(table, 'utf8').catch(() => '');
      for (const line of text.split('\n').slice(1)) {
        const cols = line.trim().split(/\s+/);
        const local = cols[1];
        if (!local || cols[3] !== '0A') continue; // 0A = LISTEN
        if (parseInt(local.split(':')[1] ?? '', 16) === port && cols[9]) inodes.add(cols[9]);
      }
    }
    if (inodes.size === 0) return undefined;
    for (const pid of (await readdir('/proc')).filter((d) => /^\d+$/.test(d))) {
      const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
      for (const fd of fds) {
        const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
        const m = /^socket:\[(\d+)\]$/.exec(target);
        if (m && inodes.has(m[1] as string)) {
          const comm = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim();
          return `${comm || 'a process'} (pid ${pid})`;
        }
      }
    }
  } catch {
    // Diagnostics only.
  }
  return undefined;
}
