/**
 * Whether this host has python3: the unit tests that run the image's Python programs (the session
 * holder, the agent hook) on the host skip themselves, saying why, where it has none.
 */
import { execFileSync } from 'node:child_process';

export const hasPython = (() => {
  try {
    execFileSync('python3', ['-c', ''], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
