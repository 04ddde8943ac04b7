/**
 * /propose (docs/decisions/0044-proposals-for-protected-paths.md): only a protected path of the
 * container's own folder, only text, only within the limits, never through a link; the route
 * writes nothing, and Apply writes only what was shown, checking the path again.
 */
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync, existsSync, linkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Proposal, ProposalAnswer } from '../../extension/src/bridge/route';
import { PROPOSAL_LIMITS } from '../../extension/src/contract/shims';
import { proposalContentProblem, proposalPath } from '../../extension/src/plan/proposals';
import { call, startRig, unixTarget, type Rig } from './support';

describe('proposalPath: which paths may be proposed', () => {
  const ok = [
    '.vscode/settings.json',
    '.vscode/tasks.json',
    '.vscode/deep/new.json',
    '.git/config',
    '.git/hooks/pre-commit',
    '.git/info/exclude',
    '.gitmodules',
    '.envrc',
    '.mcp.json',
    '.toolbox.yaml',
    '.idea/workspace.xml',
    '.devcontainer/devcontainer.json',
    '.claude/settings.json',
    '.claude/settings.local.json',
    '.claude/settings.team.json',
    '.claude/commands/review.md',
    '.claude/agents/x.md',
  ];
  for (const p of ok) it(`accepts ${p}`, () => assert.deepEqual(proposalPath(p), { path: p }));
  const bad = [
    '',
    'README.md',
    'src/index.ts',
    '/etc/passwd',
    '/workspace/.vscode/settings.json',
    '../.vscode/settings.json',
    '.vscode/../README.md',
    '.vscode/./settings.json',
    '.vscode//settings.json',
    '.vscode/',
    '.vscode',
    '.git/worktrees/x/config.worktree',
    '.git/HEAD',
    '.git/objects/ab/cd',
    '.claude/CLAUDE.md',
    '.claude/notes/settings.json',
    'sub/.vscode/settings.json',
    '.vscode/settings.json\n',
    '.vscode/\u001b[31m',
    `.vscode/${'a'.repeat(256)}`,
    `.vscode/${'a/'.repeat(300)}x`,
  ];
  for (const p of bad) {
    it(`refuses ${JSON.stringify(p).slice(0, 60)}`, () => assert.ok('problem' in proposalPath(p)));
  }
});

describe('proposalContentProblem', () => {
  it('accepts text with tabs, newlines and any Unicode', () => {
    assert.equal(proposalContentProblem('{\n\t"a": "é 日本 🙂"\r\n}\f'), undefined);
  });
  for (const [what, text] of [
    ['NUL', 'a\u0000b'],
    ['an escape', 'a\u001b[2Jb'],
    ['a lone surrogate', 'a\ud800b'],
    ['too many bytes', 'x'.repeat(PROPOSAL_LIMITS.contentBytes + 1)],
    ['too many bytes by multi-byte characters', 'é'.repeat(PROPOSAL_LIMITS.contentBytes / 2 + 1)],
  ] as const) {
    it(`refuses ${what}`, () => assert.ok(proposalContentProblem(text) !== undefined));
  }
});

describe('/propose over the bridge', () => {
  let rig: Rig;
  const taken: Proposal[] = [];
  let answer: ProposalAnswer = { accepted: true };
  before(async () => {
    rig = await startRig({
      prepare({ root, workspace }) {
        mkdirSync(join(workspace, '.vscode'));
        writeFileSync(join(workspace, '.vscode', 'settings.json'), '{"old": true}\n');
        mkdirSync(join(workspace, '.git', 'hooks'), { recursive: true });
        writeFileSync(join(workspace, '.git', 'config'), '[core]\n');
        mkdirSync(join(workspace, '.mcp.json')); // the protection's placeholder for a missing file
        mkdirSync(join(root, 'outside'));
        writeFileSync(join(root, 'outside', 'settings.json'), 'host secret');
        symlinkSync(join(root, 'outside'), join(workspace, '.idea'));
        symlinkSync(join(root, 'outside', 'settings.json'), join(workspace, '.envrc'));
        writeFileSync(join(root, 'outside', 'linked'), 'x');
        linkSync(join(root, 'outside', 'linked'), join(workspace, '.gitmodules'));
      },
      hub: {
        propose: (p) => {
          if (answer.accepted) taken.push(p);
          return answer;
        },
      },
    });
  });
  after(() => rig.cleanup());
  const propose = (body: unknown) => call(unixTarget(rig), '/propose', { token: rig.token, body });

  it('takes a proposal for a protected file and writes nothing', async () => {
    const reply = await propose({ path: '.vscode/settings.json', content: '{"new": true}\n' });
    assert.equal(reply.status, 204, reply.text);
    const p = taken.at(-1)!;
    assert.equal(p.path, '.vscode/settings.json');
    assert.equal(p.content, '{"new": true}\n');
    assert.equal(readFileSync(join(rig.workspace, '.vscode', 'settings.json'), 'utf8'), '{"old": true}\n');
    assert.equal(await p.current(), '{"old": true}\n');
  });

  it('Apply writes the same file in place (its inode stays, so a bind of it stays attached)', async () => {
    const file = join(rig.workspace, '.vscode', 'settings.json');
    const before = statSync(file).ino;
    const p = taken.find((x) => x.path === '.vscode/settings.json')!;
    assert.equal(await p.apply(), 'updated');
    assert.equal(readFileSync(file, 'utf8'), '{"new": true}\n');
    assert.equal(statSync(file).ino, before);
  });

  it('Apply creates a new file, and its missing folders inside the protected folder', async () => {
    const reply = await propose({ path: '.vscode/sub/tasks.json', content: '{}' });
    assert.equal(reply.status, 204, reply.text);
    assert.equal(await taken.at(-1)!.current(), '');
    assert.equal(await taken.at(-1)!.apply(), 'created');
    assert.equal(readFileSync(join(rig.workspace, '.vscode', 'sub', 'tasks.json'), 'utf8'), '{}');
  });

  it('a new hook is executable', async () => {
    assert.equal((await propose({ path: '.git/hooks/pre-commit', content: '#!/bin/sh\nexit 0\n' })).status, 204);
    await taken.at(-1)!.apply();
    assert.equal(statSync(join(rig.workspace, '.git', 'hooks', 'pre-commit')).mode & 0o777, 0o755);
  });

  it('Apply replaces the empty placeholder folder of a missing file', async () => {
    assert.equal((await propose({ path: '.mcp.json', content: '{"mcpServers": {}}' })).status, 204);
    assert.equal(await taken.at(-1)!.apply(), 'replaced-placeholder');
    assert.ok(lstatSync(join(rig.workspace, '.mcp.json')).isFile());
  });

  it('Apply refuses a target that became a symbolic link after the proposal', async () => {
    writeFileSync(join(rig.workspace, '.toolbox.yaml'), 'agent: claude\n');
    assert.equal((await propose({ path: '.toolbox.yaml', content: 'agent: codex\n' })).status, 204);
    const p = taken.at(-1)!;
    const { rmSync } = await import('node:fs');
    rmSync(join(rig.workspace, '.toolbox.yaml'));
    symlinkSync(join(rig.root, 'outside', 'settings.json'), join(rig.workspace, '.toolbox.yaml'));
    await assert.rejects(p.apply(), /was not written/);
    assert.equal(readFileSync(join(rig.root, 'outside', 'settings.json'), 'utf8'), 'host secret');
  });

  const refusedCases: Array<[string, unknown, number, RegExp]> = [
    ['a non-protected path', { path: 'README.md', content: 'x' }, 400, /not a protected path/],
    ['a traversal', { path: '.vscode/../../outside/settings.json', content: 'x' }, 400, /clean/],
    ['an absolute path', { path: '/etc/passwd', content: 'x' }, 400, /relative/],
    ['a symlinked protected folder', { path: '.idea/settings.json', content: 'x' }, 400, /symbolic link/],
    ['a symlinked protected file', { path: '.envrc', content: 'x' }, 400, /symbolic link/],
    ['a file with other names', { path: '.gitmodules', content: 'x' }, 400, /hard links/],
    ['binary content', { path: '.vscode/settings.json', content: 'a\u0000b' }, 400, /not text/],
    ['an unknown field', { path: '.vscode/settings.json', content: 'x', mode: 493 }, 400, /unknown field/],
    ['a missing field', { path: '.vscode/settings.json' }, 400, /content/],
    ['content not a string', { path: '.vscode/settings.json', content: { a: 1 } }, 400, /content/],
  ];
  for (const [what, body, status, text] of refusedCases) {
    it(`refuses ${what}`, async () => {
      const count = taken.length;
      const reply = await propose(body);
      assert.equal(reply.status, status, reply.text);
      assert.match(reply.text, text);
      assert.equal(taken.length, count);
    });
  }

  it('refuses a body over the limit before reading it', async () => {
    const reply = await propose({ path: '.vscode/settings.json', content: 'x'.repeat(2 * 1024 * 1024) });
    assert.equal(reply.status, 413);
  });

  it('refuses content over the content limit', async () => {
    const reply = await propose({ path: '.vscode/settings.json', content: 'x'.repeat(PROPOSAL_LIMITS.contentBytes + 1) });
    assert.equal(reply.status, 400);
    assert.match(reply.text, /over the/);
  });

  it("passes the editor's refusal on as 403", async () => {
    answer = { accepted: false, reason: 'a proposal for it is already waiting.' };
    const reply = await propose({ path: '.vscode/settings.json', content: 'y' });
    answer = { accepted: true };
    assert.equal(reply.status, 403);
    assert.match(reply.text, /already waiting/);
  });

  it('never created anything outside the folder', () => {
    assert.equal(readFileSync(join(rig.root, 'outside', 'settings.json'), 'utf8'), 'host secret');
    assert.ok(!existsSync(join(rig.root, 'outside', 'sub')));
  });
});
