/**
 * The agent-worktree layout and plans, held to upstream's. Expected values are transcribed from
 * filippolmt/toolbox:
 *   internal/worktree/plan.go   @ 9886683e0897942a67e129ef9b7636af16540693 (worktreeDirName,
 *     worktreePath, isToolboxWorktree, ensureExcludeLine, parseWorktrees, findToolboxWorktree,
 *     branchDeleteArgs, shouldDeleteRemote, syncPlan, continuePlan, pruneCandidates)
 *   internal/worktree/worktree.go @ 9886683e0897942a67e129ef9b7636af16540693 (branch.<b>.base)
 *   cmd/worktree.go             @ c7b5e7a836c6074b4860db7a08d92bf6845cfa61 (applyWorktreeSession:
 *     the <root>/.git bind at its own path)
 *   docs/commands.md            @ 02e655458a84dbda696122cf81bfc843aa3ceff1 (the seed set)
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentStreamRecognizer, type StreamSignal } from '../../extension/src/ui/agents/agentStream';
import {
  agentLaunchCommand,
  AGENT_LAUNCH_SCRIPT,
  baseConfigKey,
  branchDeleteArgs,
  branchInputProblem,
  continueSteps,
  describeShellCommand,
  ensureExcludeLine,
  findToolboxWorktree,
  isToolboxWorktree,
  parseAheadBehind,
  parseBranchList,
  parseWorktreeList,
  pruneCandidates,
  seedCandidates,
  shouldDeleteRemote,
  syncSteps,
  worktreeAgentProblem,
  worktreeDirName,
  worktreePath,
} from '../../extension/src/plan/worktree';

describe('worktree layout (upstream plan.go)', () => {
  it('puts a branch under <root>/.worktrees/tbx-<branch>, slashes as dashes', () => {
    assert.equal(worktreeDirName('feat-auth'), 'tbx-feat-auth');
    assert.equal(worktreeDirName('feature/x/y'), 'tbx-feature-x-y');
    assert.equal(worktreePath('/home/u/repo', 'feature/x'), '/home/u/repo/.worktrees/tbx-feature-x');
    assert.equal(worktreePath('/home/u/repo/', 'a'), '/home/u/repo/.worktrees/tbx-a');
  });

  it('owns only direct tbx- children of <root>/.worktrees', () => {
    assert.equal(isToolboxWorktree('/r', '/r/.worktrees/tbx-a'), true);
    assert.equal(isToolboxWorktree('/r', '/r/.worktrees/agent-a'), false, 'an agent-made worktree is not ours');
    assert.equal(isToolboxWorktree('/r', '/r/.worktrees/x/tbx-a'), false);
    assert.equal(isToolboxWorktree('/r', '/r'), false);
    assert.equal(isToolboxWorktree('/r', '/other/.worktrees/tbx-a'), false);
    assert.equal(isToolboxWorktree('/r', '/r/.worktrees/tbx-'), false);
  });

  it('records the base as branch.<branch>.base', () => {
    assert.equal(baseConfigKey('feature/x'), 'branch.feature/x.base');
  });

  it('adds .worktrees/ to the exclude file once, exact line match', () => {
    assert.deepEqual(ensureExcludeLine(''), { body: '.worktrees/\n', changed: true });
    assert.deepEqual(ensureExcludeLine('# x'), { body: '# x\n.worktrees/\n', changed: true });
    assert.deepEqual(ensureExcludeLine('a\n.worktrees/\n'), { body: 'a\n.worktrees/\n', changed: false });
    assert.equal(ensureExcludeLine(' .worktrees/\n').changed, true, 'a padded line does not exclude in git');
  });
});

describe('worktree list and lookup', () => {
  const porcelain = [
    'worktree /r',
    'HEAD 1111',
    'branch refs/heads/main',
    '',
    'worktree /r/.worktrees/tbx-feature-x',
    'HEAD 2222',
    'branch refs/heads/feature/x',
    '',
    'worktree /r/.worktrees/tbx-rebasing',
    'HEAD 3333',
    'detached',
    '',
    'worktree /r/.worktrees/tbx-gone',
    'HEAD 4444',
    'branch refs/heads/gone',
    'prunable gitdir file points to non-existent location',
    '',
  ].join('\n');

  it('parses the porcelain listing', () => {
    const list = parseWorktreeList(porcelain);
    assert.equal(list.length, 4);
    assert.deepEqual(list[1], { path: '/r/.worktrees/tbx-feature-x', head: '2222', branch: 'feature/x', bare: false, prunable: false });
    assert.equal(list[2]?.branch, undefined);
    assert.equal(list[3]?.prunable, true);
  });

  it('finds a worktree by its exact branch, or a detached one by its folder', () => {
    const list = parseWorktreeList(porcelain);
    assert.equal(findToolboxWorktree('/r', 'feature/x', list)?.path, '/r/.worktrees/tbx-feature-x');
    assert.equal(findToolboxWorktree('/r', 'feature-x', list), undefined, 'feature-x shares the folder name but not the branch');
    assert.equal(findToolboxWorktree('/r', 'rebasing', list)?.path, '/r/.worktrees/tbx-rebasing');
    assert.equal(findToolboxWorktree('/r', 'main', list), undefined, 'the main checkout is never a toolbox worktree');
  });

  it('parses branch --merged and rev-list counts', () => {
    assert.deepEqual([...parseBranchList('* main\n+ feature/x\n  old\n  (HEAD detached at 1)\n')], ['main', 'feature/x', 'old']);
    assert.deepEqual(parseAheadBehind('3\t5\n'), { behind: 3, ahead: 5 });
    assert.equal(parseAheadBehind('garbage'), undefined);
  });
});

describe('remove, sync and prune plans', () => {
  it('deletes the branch safely unless forced', () => {
    assert.deepEqual(branchDeleteArgs('x', false), ['branch', '-d', '--', 'x']);
    assert.deepEqual(branchDeleteArgs('x', true), ['branch', '-D', '--', 'x']);
  });

  it('touches origin only when asked, after the local delete, and when origin has the branch', () => {
    assert.equal(shouldDeleteRemote(true, true, true), true);
    assert.equal(shouldDeleteRemote(false, true, true), false);
    assert.equal(shouldDeleteRemote(true, false, true), false);
    assert.equal(shouldDeleteRemote(true, true, false), false);
  });

  it('syncs with fetch, rebase onto origin/<base>, push --force-with-lease', () => {
    assert.deepEqual(syncSteps('main', { fetch: true, push: true }), [
      ['fetch', 'origin', '--', 'main'],
      ['rebase', 'origin/main'],
      ['push', '--force-with-lease'],
    ]);
    assert.deepEqual(syncSteps('dev', { fetch: false, push: false }), [['rebase', 'origin/dev']]);
    assert.deepEqual(continueSteps(true), [
      ['rebase', '--continue'],
      ['push', '--force-with-lease'],
    ]);
  });

  it('prunes by each worktree’s own base', () => {
    const list = parseWorktreeList(
      [
        'worktree /r',
        'branch refs/heads/main',
        '',
        'worktree /r/.worktrees/tbx-a',
        'branch refs/heads/a',
        '',
        'worktree /r/.worktrees/tbx-b',
        'branch refs/heads/b',
        '',
      ].join('\n'),
    );
    const bases: Record<string, string> = { a: 'main', b: 'dev' };
    const merged: Record<string, string[]> = { main: ['a', 'b', 'main'], dev: [] };
    const out = pruneCandidates(
      '/r',
      list,
      (b) => bases[b],
      (base, b) => merged[base]?.includes(b) === true,
    );
    assert.deepEqual(
      out.map((e) => e.branch),
      ['a'],
    );
  });
});

describe('seed, mounts and agent launch', () => {
  it("seeds upstream's curated set, .env.* expanded from the root, then worktree.seed", () => {
    assert.deepEqual(
      seedCandidates(['.env.local', '.env.test', 'src', '.envrc'], ['data/fixtures', '.env', '../x', '.git/config', '.worktrees/a']),
      ['.claude/settings.local.json', '.env', '.env.local', '.env.test', 'openspec', '.planning', 'data/fixtures'],
    );
  });

  it('passes the prompt as one argv element of a fixed script, never inside the script', () => {
    const prompt = 'fix $(touch /tmp/pwned) `id`; rm -rf / "q" \'s\'\nline two';
    const cmd = agentLaunchCommand('claude', prompt);
    assert.deepEqual(cmd, ['/bin/zsh', '-i', '-c', AGENT_LAUNCH_SCRIPT, 'toolbox-agent', 'claude', prompt]);
    assert.ok(!AGENT_LAUNCH_SCRIPT.includes('pwned'));
    assert.deepEqual(agentLaunchCommand('codex', ''), ['/bin/zsh', '-i', '-c', AGENT_LAUNCH_SCRIPT, 'toolbox-agent', 'codex']);
  });

  it("prints the exit mark with the agent's status before the shell follows (sh runs the same script here)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'tbx-launch-'));
    try {
      const agent = join(dir, 'claude');
      writeFileSync(agent, '#!/bin/sh\necho "agent says $1"\nexit 3\n', { mode: 0o755 });
      // The shell that follows reads stdin: with none it exits at once (the container's zsh is not on every host: sh stands in).
      const script = AGENT_LAUNCH_SCRIPT.replace('/bin/zsh -i', 'sh -i');
      const out = execFileSync('sh', ['-c', script, 'toolbox-agent', agent, 'the task'], { input: '', encoding: 'utf8' });
      assert.ok(out.startsWith('agent says the task\n\x1b]7717;agent-exit;3;claude\x07'), JSON.stringify(out));
      assert.match(AGENT_LAUNCH_SCRIPT, /; exec \/bin\/zsh -i$/);
      const signals: StreamSignal[] = [];
      new AgentStreamRecognizer((sig) => signals.push(sig)).feed(Buffer.from(out));
      assert.deepEqual(signals, [{ kind: 'agentExit', status: 3, agent: 'claude' }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('shows an agent launch as the agent, never the script or the task', () => {
    assert.equal(describeShellCommand(agentLaunchCommand('claude', 'secret task $(x)')), 'claude (agent)');
    assert.equal(describeShellCommand(['/bin/zsh']), '/bin/zsh');
  });

  it('starts claude or codex only', () => {
    assert.equal(worktreeAgentProblem('claude'), undefined);
    assert.equal(worktreeAgentProblem('codex'), undefined);
    assert.match(worktreeAgentProblem('pi') ?? '', /use claude or codex/);
  });

  it('refuses empty, option-like and spaced branch names before git is asked', () => {
    assert.match(branchInputProblem('') ?? '', /Type a branch name/);
    assert.match(branchInputProblem('-rf') ?? '', /starts with "-"/);
    assert.match(branchInputProblem('my branch') ?? '', /contains a space/);
    assert.equal(branchInputProblem('fix/x'), undefined);
  });
});
