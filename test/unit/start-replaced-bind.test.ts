/**
 * A container start that lost the race with host git replacing a bound file (engine/open.ts
 * replacedBindOf): the engine's words as `npm run bench worktree` met them, and what is not it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { replacedBindOf } from '../../extension/src/engine/open';

const config = '/tmp/tbxb104797-wt-KCUugT/repo/.git/config';
const runc =
  'failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: ' +
  `error mounting "${config}" to rootfs at "${config}": mount ${config}:${config} (via /proc/self/fd/7), flags: 0x5001: no such file or directory: unknown`;

describe('a start that met a bound file replaced while it was mounted', () => {
  it('names the bound file runc could not mount', () => {
    assert.equal(replacedBindOf(runc, new Set([config, '/tmp/x'])), config);
  });

  it('is not a path the container does not bind (the text is the engine’s, never trusted beyond a match)', () => {
    assert.equal(replacedBindOf(runc, new Set(['/tmp/x'])), undefined);
  });

  it('is not another start failure', () => {
    const other = runc.replace('no such file or directory', 'permission denied');
    assert.equal(replacedBindOf(other, new Set([config])), undefined);
    assert.equal(
      replacedBindOf('driver failed programming external connectivity: port is already allocated', new Set([config])),
      undefined,
    );
  });
});
