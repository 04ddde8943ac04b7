/**
 * ssh:// engine connection vs the unix socket, in one run (issue 18 item 4). The ssh:// side goes
 * through a loopback sshd the bench owns (test/support/sshd.ts) to this machine's engine, so the
 * difference is the SSH leg alone: TCP, key exchange, authentication, and `docker system
 * dial-stdio` started on the far side.
 * - set-up: connectEngine (client creation, the version check) + a ping + the first list;
 * - a request on a connected client: one list (the transport keeps its dial-stdio channel alive);
 * - for reference, dockerode's own ssh transport, which opens a new SSH connection per request.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Docker from 'dockerode';
import { connectEngine, type EngineConnection } from '../extension/src/engine/client';
import { startLoopbackSshd } from '../test/support/sshd';
import { fmtMs, interleave, spreadOf, type ResultRow } from './harness';

const SOCKET = process.env.TOOLBOX_TEST_DOCKER_SOCKET ?? '/var/run/docker.sock';

export async function benchRemote(): Promise<ResultRow[]> {
  const sshd = await startLoopbackSshd();
  const opened: EngineConnection[] = [];
  try {
    const unix = `unix://${SOCKET}`;
    const setUp = async (setting: string) => {
      const c = await connectEngine({ setting, env: {}, home: sshd.home });
      await c.docker.ping();
      await c.docker.listContainers({ all: true });
      c.close();
    };
    const key = readFileSync(join(sshd.home, '.ssh', 'id_ed25519'));
    const builtin = () =>
      new Docker({
        protocol: 'ssh',
        host: '127.0.0.1',
        port: sshd.port,
        username: sshd.user,
        sshOptions: { privateKey: key },
      } as Docker.DockerOptions);
    const setup = await interleave(
      {
        unix: () => setUp(unix),
        ssh: () => setUp(sshd.endpoint),
        dockerodeSsh: async () => {
          const d = builtin();
          await d.version();
          await d.ping();
          await d.listContainers({ all: true });
        },
      },
      { rounds: 15, warmup: 3 },
    );

    const viaUnix = await connectEngine({ setting: unix, env: {}, home: sshd.home });
    const viaSsh = await connectEngine({ setting: sshd.endpoint, env: {}, home: sshd.home });
    opened.push(viaUnix, viaSsh);
    const dockerodeSsh = builtin();
    const warm = await interleave(
      {
        unix: async () => void (await viaUnix.docker.listContainers({ all: true })),
        ssh: async () => void (await viaSsh.docker.listContainers({ all: true })),
        dockerodeSsh: async () => void (await dockerodeSsh.listContainers({ all: true })),
      },
      { rounds: 30, warmup: 3 },
    );

    const u = setup.unix!;
    const s = setup.ssh!;
    const b = setup.dockerodeSsh!;
    const wu = warm.unix!;
    const ws = warm.ssh!;
    const wb = warm.dockerodeSsh!;
    return [
      {
        benchmark: 'Remote engine: set-up',
        measure: 'connectEngine + ping + first list: ssh:// (loopback sshd) vs the unix socket',
        value: `${(s.median / u.median).toFixed(1)}× (ssh ${fmtMs(s.median)}, unix ${fmtMs(u.median)})`,
        spread: `ssh ${spreadOf(s)}; unix ${spreadOf(u)}`,
        goal: '–',
        met: undefined,
      },
      {
        benchmark: 'Remote engine: set-up',
        measure: "the same with dockerode's own ssh transport (a new SSH connection per request, no host key check)",
        value: `${fmtMs(b.median)} (${(b.median / s.median).toFixed(1)}× ours)`,
        spread: spreadOf(b),
        goal: '–',
        met: undefined,
      },
      {
        benchmark: 'Remote engine: request',
        measure: 'one list on a connected client: ssh:// vs the unix socket (and dockerode’s ssh transport)',
        value: `${(ws.median / wu.median).toFixed(1)}× (ssh ${fmtMs(ws.median)}, unix ${fmtMs(wu.median)}; dockerode ssh ${fmtMs(wb.median)})`,
        spread: `ssh ${spreadOf(ws)}; unix ${spreadOf(wu)}`,
        goal: '–',
        met: undefined,
      },
    ];
  } finally {
    for (const c of opened) c.close();
    await sshd.stop();
  }
}
