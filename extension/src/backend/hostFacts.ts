/**
 * The host facts the planner needs, read from this machine. The planner itself is pure; this
 * adapter is the only place the UI layer asks the OS about users and paths.
 */
import { existsSync, statSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { HOST } from '../contract/constants';
import type { HostFacts } from '../contract/types';

export function readHostFacts(env: NodeJS.ProcessEnv = process.env): HostFacts {
  const info = safeUserInfo();
  return {
    uid: process.getuid?.() ?? info?.uid ?? 1000,
    gid: process.getgid?.() ?? info?.gid ?? 1000,
    // HOME first: the tests point it at a temporary directory so ~/.toolbox is theirs.
    home: env.HOME || homedir(),
    platform: process.platform,
    arch: process.arch,
    pathExists: (p: string) => existsSync(p),
    dockerSocketGid: socketGid(HOST.dockerSocket),
  };
}

function safeUserInfo(): { uid: number; gid: number } | undefined {
  try {
    return userInfo();
  } catch {
    return undefined;
  }
}

function socketGid(path: string): number | undefined {
  try {
    return statSync(path).gid;
  } catch {
    return undefined;
  }
}
