/**
 * Run Doctor's engine lines (plan/doctor/): reachable or why not, the product, its API against
 * MIN_API_VERSION (contract/constants.ts), and an engine on another machine.
 */
import { MIN_API_VERSION } from '../../contract/constants';
import { COMMAND_LABELS, SETTINGS } from '../../contract/manifest';
import { oneLine } from './shared';
import { isUnread, type DoctorCheck, type EndpointFoundBy, type EngineFacts } from './types';

function apiAtLeast(version: string, floor: string): boolean | undefined {
  const parse = (v: string) => /^(\d{1,4})\.(\d{1,4})$/.exec(v.trim());
  const a = parse(version);
  const b = parse(floor);
  if (!a || !b) return undefined;
  return Number(a[1]) > Number(b[1]) || (Number(a[1]) === Number(b[1]) && Number(a[2]) >= Number(b[2]));
}

/** How the endpoint was found, in words; `source` is engine/client.ts describeSource's. */
function foundBy(foundBy: EndpointFoundBy, source: string): string {
  switch (foundBy) {
    case 'setting':
      return `set in ${SETTINGS.dockerHost}`;
    case 'DOCKER_HOST':
      return 'set in the DOCKER_HOST environment variable';
    case 'context':
      return `set in the current Docker context (${oneLine(source, 200)})`;
    case 'probe':
      return `found by probing the usual sockets in order, nothing being configured: ${oneLine(source, 200)}`;
  }
}

export function engineChecks(e: EngineFacts): DoctorCheck[] {
  if (!e.reachable) {
    if (e.tooOld) {
      return [
        {
          id: 'engine.reachable',
          status: 'fail',
          title: 'Engine too old',
          detail: oneLine(e.reason),
          fix: `Update Docker (20.10 or newer) or Podman (4.3 or newer), or pick a newer engine with ${COMMAND_LABELS.selectEngine.label}.`,
        },
      ];
    }
    return [
      {
        id: 'engine.reachable',
        status: e.timedOut ? 'warn' : 'fail',
        title: e.timedOut ? 'Engine slow to answer' : 'Engine not reachable',
        detail: oneLine(e.reason),
        fix: `Start the engine, or pick one with ${COMMAND_LABELS.selectEngine.label}, or set ${SETTINGS.dockerHost} in your User settings.`,
      },
    ];
  }
  const checks: DoctorCheck[] = [
    {
      id: 'engine.reachable',
      status: 'pass',
      title: 'Engine reachable',
      detail: `${oneLine(e.endpoint)}, ${foundBy(e.foundBy, e.source)}.`,
    },
  ];
  const rootless = e.rootless === undefined || isUnread(e.rootless) ? 'rootful or rootless: not told' : e.rootless ? 'rootless' : 'rootful';
  checks.push({
    id: 'engine.product',
    status: 'pass',
    title: 'Engine product',
    detail: `${e.product} ${oneLine(e.version, 64)} (${rootless}).`,
  });
  const atLeast = apiAtLeast(e.apiVersion, MIN_API_VERSION);
  checks.push(
    atLeast === true
      ? {
          id: 'engine.api',
          status: 'pass',
          title: 'Engine API',
          detail: `API ${oneLine(e.apiVersion, 32)}; the oldest supported is ${MIN_API_VERSION}.`,
        }
      : {
          id: 'engine.api',
          status: 'fail',
          title: 'Engine API',
          detail:
            atLeast === false
              ? `API ${oneLine(e.apiVersion, 32)} is older than the oldest supported (${MIN_API_VERSION}).`
              : `The engine reports the API version "${oneLine(e.apiVersion, 32)}", which is not a Docker Engine API version.`,
          fix: `Update Docker (20.10 or newer) or Podman (4.3 or newer), or pick another engine with ${COMMAND_LABELS.selectEngine.label}.`,
        },
  );
  if (e.remoteHost !== undefined) {
    checks.push({
      id: 'engine.remote',
      status: 'warn',
      title: 'Engine on another machine',
      detail: `It runs on ${oneLine(e.remoteHost, 200)}: it cannot mount a folder of this machine, so opening a shell here is refused.`,
      fix: `Pick a local engine with ${COMMAND_LABELS.selectEngine.label}, or open the folder on that machine with VS Code Remote-SSH.`,
    });
  }
  return checks;
}
