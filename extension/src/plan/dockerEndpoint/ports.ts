/**
 * The ports a new container publishes on this host (HostConfig.PortBindings, PublishAllPorts;
 * docs/decisions/0047-docker-endpoint-policy.md, issue 38). Docker publishes a port on every
 * address of the host when the client names none, where other machines on its networks reach it,
 * and on any port the client names, one a service of the host or Toolbox itself would listen on
 * included. So: an address only on loopback or the one the workspace container reaches the host at
 * (`scope.publish.hostIp`, which a port published without an address gets) unless the user allows
 * any; never a host port below 1024 nor one Toolbox listens on. Pure: no I/O.
 */
import { BRIDGE_DEFAULT_PORT, BRIDGE_PORT_COUNT } from '../../contract/manifest';
import { LOGIN_PRESETS } from '../../contract/upstream';
import type { EndpointScope } from './routes';
import { forbidden, malformed } from './wire';

/** What a port binding is in a create body. */
export interface PortBinding {
  HostIp?: string | null;
  HostPort?: string | null;
}

/** Where a port published without an address goes when the scope knows no address of its own. */
export const LOOPBACK = '127.0.0.1';

/** Ports below this are the host's system services' (binding them needs root, which Docker has). */
const FIRST_UNPRIVILEGED = 1024;

/** Host ports Toolbox listens on itself, on loopback: its bridge, and the login callbacks it forwards. */
const TOOLBOX_PORTS: ReadonlyArray<{ from: number; to: number; what: string }> = [
  { from: BRIDGE_DEFAULT_PORT, to: BRIDGE_DEFAULT_PORT + BRIDGE_PORT_COUNT - 1, what: 'Toolbox’s bridge' },
  ...LOGIN_PRESETS.map((p) => ({ from: p.ports[0], to: p.ports[1], what: `the ${p.tool} login callback Toolbox forwards` })),
];

const OCTET = '(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const IPV4_LOOPBACK = new RegExp(`^127\\.${OCTET}\\.${OCTET}\\.${OCTET}$`);

/** 127.0.0.0/8 in plain dotted decimal, or `::1`; any other spelling is not taken for loopback. */
export function isLoopbackAddress(ip: string): boolean {
  return IPV4_LOOPBACK.test(ip) || ip === '::1';
}

const ANY_ADDRESS_HINT = 'to publish on every address, set toolbox.dockerEndpointPorts to any-address in your VS Code User settings';

/** Why a host port (or range) may not be published on, or undefined when it may. */
function portRefusal(from: number, to: number): string | undefined {
  if (from < FIRST_UNPRIVILEGED)
    return `host port${from === to ? '' : 's'} ${range(from, to)}, below ${FIRST_UNPRIVILEGED}: those belong to this host's system services`;
  const taken = TOOLBOX_PORTS.find((t) => from <= t.to && t.from <= to);
  if (taken) return `host port${from === to ? '' : 's'} ${range(from, to)}, where ${taken.what} listens (${range(taken.from, taken.to)})`;
  return undefined;
}

const range = (from: number, to: number): string => (from === to ? String(from) : `${from}–${to}`);

/** A binding's HostPort: empty or 0 (the engine picks a free one, from its ephemeral range), a port, or a range to pick from. */
function checkHostPort(raw: string, where: string): void {
  if (raw === '') return;
  const m = /^([0-9]{1,5})(?:-([0-9]{1,5}))?$/.exec(raw);
  if (!m) throw malformed('field-type', `${where}: the host port ${JSON.stringify(raw)} is not a port or a range of ports.`);
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : Number(m[2]);
  if (to > 65535 || from > to) throw malformed('field-type', `${where}: the host port ${raw} is not a port or a range of ports.`);
  if (m[2] === undefined && from === 0) return;
  const why = portRefusal(from, to);
  if (why !== undefined) {
    throw forbidden(
      'published-port',
      `${where} asks for ${why}. Publish on another port from ${FIRST_UNPRIVILEGED} up (-p 8080:80), or leave the host port out and the engine picks a free one (-p 80).`,
    );
  }
}

/**
 * HostConfig.PortBindings and PublishAllPorts, judged; the bindings to forward, every address
 * written out. Throws Refused.
 */
export function judgePortBindings(
  bindings: Record<string, PortBinding[] | null | undefined> | null | undefined,
  publishAll: boolean | null | undefined,
  scope: EndpointScope,
): Record<string, PortBinding[] | null | undefined> | null | undefined {
  const any = scope.publish?.anyAddress === true;
  const own = scope.publish?.hostIp ?? LOOPBACK;
  const ownSaid = scope.publish?.hostIp !== undefined ? `${own}, which this workspace container reaches as host.docker.internal` : own;
  if (publishAll === true && !any) {
    throw forbidden(
      'published-port',
      `HostConfig.PublishAllPorts publishes every port the image exposes on every address of this host, where other machines on its networks reach them. Publish the ports you need one by one instead (-p 8080, which listens on ${ownSaid}); ${ANY_ADDRESS_HINT}.`,
    );
  }
  if (bindings === null || bindings === undefined) return bindings;
  const out: Record<string, PortBinding[] | null | undefined> = {};
  for (const [port, list] of Object.entries(bindings)) {
    const where = `HostConfig.PortBindings ${port}`;
    out[port] = list?.map((b) => {
      checkHostPort(b.HostPort ?? '', where);
      const ip = b.HostIp ?? '';
      if (ip === '') return { ...b, HostIp: any ? '' : own };
      if (!any && !isLoopbackAddress(ip) && ip !== scope.publish?.hostIp) {
        throw forbidden(
          'published-port',
          `${where} asks to listen on ${ip}, ${ip === '0.0.0.0' || ip === '::' ? 'every address of this host' : 'an address of this host other than loopback'}, where other machines on its networks can reach it. Leave the address out (the port then listens on ${ownSaid}) or name 127.0.0.1; ${ANY_ADDRESS_HINT}.`,
        );
      }
      return b;
    });
  }
  return out;
}
