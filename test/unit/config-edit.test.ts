import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setPeerMessaging } from '../../extension/src/config/edit';
import { parseConfigFile } from '../../extension/src/config/parse';

// Turn Off for This Folder no longer edits .toolbox.yaml (its container can write the file): it is
// kept in the user's settings, see test/unit/posture.test.ts and project-reach.test.ts (docs/decisions/0041).

describe('setPeerMessaging (issue 13, item 6)', () => {
  const note = 'Set in the Toolbox view.';
  const peerOf = (text: string) => parseConfigFile(text, '/p/.toolbox.yaml').layer.peerMessaging;

  it('adds peer_messaging with a comment and keeps the rest of the file', () => {
    const before = '# my project\nimage: ghcr.io/me/img:1 # pinned\n';
    const after = setPeerMessaging(before, false, note);
    assert.equal(after, '# my project\nimage: ghcr.io/me/img:1 # pinned\n# Set in the Toolbox view.\npeer_messaging: false\n');
    assert.equal(peerOf(after), false);
  });

  it('changes an existing value in place, its comments kept', () => {
    const after = setPeerMessaging('peer_messaging: true # team default\nproximo: false\n', false, note);
    assert.equal(after, 'peer_messaging: false # team default\nproximo: false\n');
    assert.equal(peerOf(setPeerMessaging(after, true, note)), true);
  });

  it('creates the content of an empty or missing file', () => {
    assert.equal(setPeerMessaging('', true, note), '# Set in the Toolbox view.\npeer_messaging: true\n');
  });

  it('refuses a file that is not a mapping or not YAML, rather than overwrite it', () => {
    assert.throws(() => setPeerMessaging('- a\n- b\n', false, note), /top level is not a mapping/);
    assert.throws(() => setPeerMessaging('a: [\n', false, note), /not valid YAML/);
  });
});
