/**
 * Whether the engine runs on another machine, and the refusal to open a local folder there
 * (docs/decisions/0035-remote-engine-refuses-local-folders.md). Pure: the engine's host name (GET
 * /info Name) and this machine's (os.hostname()) come in as arguments.
 */
import { COMMAND_LABELS } from '../contract/manifest';
import { ToolboxError } from '../contract/errors';
import type { ResolvedEndpoint } from './client';

export type EngineLocality = { remote: false } | { remote: true; engineHost: string; localHost: string };

/** `Far-Host.example.com.` → `far-host.example.com` */
function normalHost(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

/** Same machine when the names are equal, or one is the other's first label (a short name vs its FQDN). */
export function sameHostName(a: string, b: string): boolean {
  const x = normalHost(a);
  const y = normalHost(b);
  if (x === '' || y === '') return false;
  if (x === y) return true;
  const [short, long] = x.length < y.length ? [x, y] : [y, x];
  return !short.includes('.') && long.startsWith(`${short}.`);
}

/**
 * Remote means: an ssh:// or tcp:// endpoint whose engine names a different host than this one.
 * A socket (unix://, npipe://) is always this machine's, whatever the engine calls itself (Docker
 * Desktop's VM says docker-desktop and still shares the user's folders); so is an engine that
 * gives no name, as nothing says otherwise.
 */
export function engineLocality(
  endpoint: Pick<ResolvedEndpoint, 'options'>,
  engineName: string | undefined,
  localHostname: string,
): EngineLocality {
  const network = endpoint.options.protocol !== undefined && endpoint.options.socketPath === undefined;
  if (!network || engineName === undefined || engineName.trim() === '') return { remote: false };
  if (sameHostName(engineName, localHostname)) return { remote: false };
  return { remote: true, engineHost: engineName.trim().slice(0, 253), localHost: localHostname };
}

/** The refusal of an open whose folder is on this machine while the engine is on another. Pure. */
export function remoteFolderRefusal(folder: string, endpoint: string, locality: Extract<EngineLocality, { remote: true }>): string {
  return (
    `Toolbox cannot open ${folder} in a container: the Docker engine at ${endpoint} runs on another machine ` +
    `(${locality.engineHost}; this one is ${locality.localHost}). The container gets the folder as a bind mount, ` +
    `and a bind mount takes the path on the engine's machine, where this folder does not exist (Docker would make an empty one there). ` +
    `Open the folder on ${locality.engineHost} with VS Code Remote-SSH, where Toolbox uses that machine's engine, ` +
    `or pick an engine on this machine (${COMMAND_LABELS.selectEngine.label}). Nothing was created.`
  );
}

/** The refusal as the error the UI shows, with Select Engine… as its fix. */
export function remoteFolderError(folder: string, endpoint: string, locality: Extract<EngineLocality, { remote: true }>): ToolboxError {
  return new ToolboxError('engine-remote', remoteFolderRefusal(folder, endpoint, locality), ['select-engine']);
}
