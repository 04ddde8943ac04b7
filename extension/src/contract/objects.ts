import { NAME_PREFIX, OBJECT_SUFFIX } from './constants';
import type { ObjectNames } from './types';

/**
 * The names of the toolbox-owned infrastructure objects in one namespace. Production always
 * uses `toolbox` (upstream compatibility); tests pass their own prefix so they can never touch
 * a user's containers or volumes.
 */
export function objectNames(prefix: string = NAME_PREFIX): ObjectNames {
  if (!/^[a-z0-9][a-z0-9_.-]*$/.test(prefix)) {
    throw new Error(`Invalid object name prefix "${prefix}": use lowercase letters, digits, ".", "_" or "-".`);
  }
  return {
    prefix,
    anchor: `${prefix}-${OBJECT_SUFFIX.anchor}`,
    socketVolume: `${prefix}-${OBJECT_SUFFIX.socketVolume}`,
    socketVolumeInit: `${prefix}-${OBJECT_SUFFIX.socketVolumeInit}`,
    isOurs: (name: string) => {
      const bare = bareName(name);
      return bare === prefix || bare.startsWith(`${prefix}-`);
    },
  };
}

/** A container name without the leading `/` the Engine API puts on it. */
export function bareName(name: string): string {
  return name.startsWith('/') ? name.slice(1) : name;
}
