/**
 * A stand-in for the upstream toolbox CLI's shell-exit policy, reading the engine exactly as it
 * does: filippolmt/toolbox@41c0ecbda7c0feb9e3f48402d31663bd80b386df internal/teardown/teardown.go
 * `OnShellExit`. One ContainerInspect (a failure: nothing to do); `execsRunning`: ExecInspect for
 * every id in the inspect's ExecIDs, an inspect error skipped, any `Running` exec leaves the
 * container running; otherwise an AutoRemove container is killed (the engine removes it) and any
 * other is stopped (grace 2 s) and removed. It runs after the CLI's own exec has ended, so that
 * exec never counts itself.
 */
import type Docker from 'dockerode';

export type UpstreamExit = 'left running' | 'removed' | 'gone already';

export async function upstreamOnShellExit(docker: Docker, name: string): Promise<UpstreamExit> {
  let inspect: Docker.ContainerInspectInfo;
  try {
    inspect = await docker.getContainer(name).inspect();
  } catch {
    return 'gone already';
  }
  for (const id of inspect.ExecIDs ?? []) {
    const exec = await docker
      .getExec(id)
      .inspect()
      .catch(() => undefined);
    if (exec?.Running) return 'left running';
  }
  const container = docker.getContainer(name);
  if (inspect.HostConfig?.AutoRemove) {
    await container.kill({ signal: 'KILL' }).catch((err: { statusCode?: number }) => {
      if (err.statusCode !== 404 && err.statusCode !== 409) throw err;
    });
  } else {
    await container.stop({ t: 2 }).catch((err: { statusCode?: number }) => {
      if (err.statusCode !== 404 && err.statusCode !== 304) throw err;
    });
    await container.remove({ force: true }).catch((err: { statusCode?: number }) => {
      if (err.statusCode !== 404 && err.statusCode !== 409) throw err;
    });
  }
  return 'removed';
}

/** Whether the engine still has a container of this name (an AutoRemove kill removes it shortly after). */
export async function containerGone(docker: Docker, name: string, timeoutMs = 15_000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const exists = await docker
      .getContainer(name)
      .inspect()
      .then(() => true)
      .catch((err: { statusCode?: number }) => err.statusCode !== 404);
    if (!exists) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}
