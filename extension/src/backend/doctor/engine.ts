/**
 * Run Doctor's engine facts (backend/doctor/): whether the engine answers in time, and why not
 * (timed out, too old), its product and API, how its endpoint was found, whether it is rootless
 * and where it runs.
 */
import { errorText } from '../../contract/errors';
import { describeSource, EngineTooOldError, type EndpointSource, type EngineConnection } from '../../engine/client';
import { podmanRootless } from '../../engine/compat';
import { isUnread, type EndpointFoundBy, type EngineFacts } from '../../plan/doctor';
import { bounded, ProbeTimeout, readFact, type DoctorContext } from './probes';

/** Whether something in the error's cause chain says it timed out (engine/client.ts unreachable) or the engine is too old. */
function causes(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 6; e = (e as { cause?: unknown }).cause, depth++) out.push(e);
  return out;
}

function foundBy(source: EndpointSource): EndpointFoundBy {
  if (source === 'setting' || source === 'DOCKER_HOST') return source;
  if (source.startsWith('context ')) return 'context';
  return 'probe';
}

export async function engineFacts(ctx: DoctorContext): Promise<{ facts: EngineFacts; connection?: EngineConnection }> {
  let c: EngineConnection;
  try {
    c = await bounded('The engine', ctx.limits.connectMs, ctx.deps.connector.connected());
  } catch (err) {
    const chain = causes(err);
    return {
      facts: {
        reachable: false,
        reason: err instanceof ProbeTimeout ? `${err.message} (nothing answered at the endpoint).` : errorText(err),
        timedOut: chain.some((e) => e instanceof ProbeTimeout || (typeof e === 'object' && e !== null && 'timeoutMs' in e)),
        tooOld: chain.some((e) => e instanceof EngineTooOldError),
      },
    };
  }
  const [locality, rootless] = await Promise.all([
    readFact('Where the engine runs', ctx.limits.probeMs, () => ctx.deps.connector.locateOrLocal()),
    readFact('Whether the engine is rootless', ctx.limits.probeMs, () => rootlessOf(c)),
  ]);
  return {
    connection: c,
    facts: {
      reachable: true,
      endpoint: c.endpoint.endpoint,
      foundBy: foundBy(c.endpoint.source),
      source: describeSource(c.endpoint.source),
      product: c.product,
      version: c.version,
      apiVersion: c.apiVersion,
      rootless,
      ...(!isUnread(locality) && locality.remote ? { remoteHost: locality.engineHost } : {}),
    },
  };
}

/** Rootless: Podman's /info (engine/compat.ts), Docker's security options (`name=rootless`). */
async function rootlessOf(c: EngineConnection): Promise<boolean> {
  if (c.product === 'Podman') return podmanRootless(c.docker);
  const info = (await c.docker.info()) as { SecurityOptions?: unknown };
  return Array.isArray(info.SecurityOptions) && info.SecurityOptions.some((o) => typeof o === 'string' && o.includes('name=rootless'));
}
