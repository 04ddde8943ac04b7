/**
 * The host-process runner (extension/src/host/process.ts) against real programs: each bound is
 * held to a time well below what the program would take without it, so removing the bound fails
 * the test instead of only slowing it down. Programs left running by a test (a grandchild that
 * holds the pipe) print their pid and are killed by it.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hostEnv, PIPE_DRAIN_MS, runHostProcess, type HostProcessOptions } from '../../extension/src/host/process';

const node = process.execPath;
const env = { from: process.env, pass: ['PATH'] } as const;
const base = { env, timeoutMs: 10_000, maxOutputBytes: 64 * 1024 };

/** Runs and measures. */
async function timed(opts: Partial<HostProcessOptions> & Pick<HostProcessOptions, 'file' | 'args'>) {
  const start = Date.now();
  const result = await runHostProcess({ ...base, ...opts });
  return { result, ms: Date.now() - start };
}

describe('host/process.ts runHostProcess', () => {
  const leftovers: number[] = [];
  after(() => {
    for (const pid of leftovers) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  /** The pid a `sleep … & echo $!` printed, to be killed after the suite. */
  const grandchild = (stdout: string): number => {
    const pid = Number(stdout.trim().split('\n')[0]);
    assert.ok(Number.isInteger(pid) && pid > 1, `no pid in ${JSON.stringify(stdout)}`);
    leftovers.push(pid);
    return pid;
  };

  it('kills a program at the deadline and says so', async () => {
    const { result, ms } = await timed({ file: 'sleep', args: ['30'], timeoutMs: 200 });
    assert.equal(result.timedOut, true);
    assert.equal(result.truncated, false);
    assert.equal(result.exit, 128 + 9);
    assert.ok(ms < 3_000, `took ${ms} ms`);
  });

  it('stops a program that writes more than the output bound, keeping exactly the first bytes', async () => {
    const { result, ms } = await timed({ file: 'yes', args: ['x'], maxOutputBytes: 1000 });
    assert.equal(result.truncated, true);
    assert.equal(result.timedOut, false, 'stopped by the output bound, not the deadline');
    assert.equal(result.stdout, 'x\n'.repeat(500));
    assert.equal(result.exit, 128 + 9);
    assert.ok(ms < 3_000, `took ${ms} ms`);
  });

  it('counts stdout and stderr together against the bound', async () => {
    const script =
      "process.stderr.write('e'.repeat(600)); setTimeout(() => process.stdout.write('o'.repeat(600)), 100); setTimeout(() => {}, 30000)";
    const { result } = await timed({ file: node, args: ['-e', script], maxOutputBytes: 1000 });
    assert.equal(result.truncated, true);
    assert.equal(result.stderr.length + result.stdout.length, 1000);
  });

  it('does not wait past the drain bound for a grandchild holding the pipe open after the program ended', async () => {
    const { result, ms } = await timed({ file: 'sh', args: ['-c', 'sleep 30 & echo $!'] });
    grandchild(result.stdout);
    assert.equal(result.exit, 0);
    assert.equal(result.timedOut, false);
    assert.ok(ms >= PIPE_DRAIN_MS - 100, `resolved after ${ms} ms, before the pipe could close`);
    assert.ok(ms < PIPE_DRAIN_MS + 2_000, `took ${ms} ms`);
  });

  it('does not wait past the drain bound for a grandchild holding the pipe open after a kill', async () => {
    const { result, ms } = await timed({ file: 'sh', args: ['-c', 'sleep 30 & echo $!; exec sleep 30'], timeoutMs: 300 });
    grandchild(result.stdout);
    assert.equal(result.timedOut, true);
    assert.ok(ms < 300 + PIPE_DRAIN_MS + 2_000, `took ${ms} ms`);
  });

  it('passes only the listed variables of the environment, plus the ones set', async () => {
    const from = { ...process.env, TBX_HOST_PROCESS_KEEP: 'kept', TBX_HOST_PROCESS_SECRET: 'leaked', TBX_HOST_PROCESS_OVER: 'from' };
    const { result } = await timed({
      file: node,
      args: ['-e', 'process.stdout.write(JSON.stringify(process.env))'],
      env: {
        from,
        pass: ['TBX_HOST_PROCESS_KEEP', 'TBX_HOST_PROCESS_OVER', 'TBX_HOST_PROCESS_UNSET'],
        set: { TBX_HOST_PROCESS_OVER: 'set', ADDED: '1' },
      },
    });
    assert.deepEqual(JSON.parse(result.stdout), { TBX_HOST_PROCESS_KEEP: 'kept', TBX_HOST_PROCESS_OVER: 'set', ADDED: '1' });
    assert.deepEqual(hostEnv({ from: { A: 'a', B: 'b' }, pass: 'all', set: { C: 'c' } }), { A: 'a', B: 'b', C: 'c' });
    assert.deepEqual(hostEnv({ from: { A: 'a', B: 'b' }, pass: [] }), {});
  });

  it('passes arguments with shell metacharacters literally, one argv element each', async () => {
    const marker = `/tmp/tbx-host-process-${process.pid}`;
    const args = ['$(touch ' + marker + ')', '; touch ' + marker, '`id`', '*', '"a b" c', '$HOME', 'a|b&&c>d', "it's", '\\n'];
    const { result } = await timed({ file: node, args: ['-e', 'process.stdout.write(JSON.stringify(process.argv.slice(1)))', ...args] });
    assert.deepEqual(JSON.parse(result.stdout), args);
    await assert.rejects(
      import('node:fs/promises').then((fs) => fs.stat(marker)),
      /ENOENT/,
    );
  });

  it('feeds the input on stdin, runs in the cwd, and keeps the streams as asked', async () => {
    const cat = await timed({ file: 'cat', args: [], input: 'hello\n' });
    assert.equal(cat.result.stdout, 'hello\n');
    const pwd = await timed({ file: 'pwd', args: [], cwd: '/' });
    assert.equal(pwd.result.stdout, '/\n');
    const both = ['-c', 'echo out; echo err >&2'];
    assert.deepEqual((({ stdout, stderr }) => ({ stdout, stderr }))((await timed({ file: 'sh', args: both })).result), {
      stdout: 'out\n',
      stderr: 'err\n',
    });
    const merged = (await timed({ file: 'sh', args: both, output: 'merged' })).result;
    assert.deepEqual([merged.stdout.split('\n').sort(), merged.stderr], [['', 'err', 'out'], '']);
    const stdoutOnly = (await timed({ file: 'sh', args: both, output: 'stdout' })).result;
    assert.deepEqual([stdoutOnly.stdout, stdoutOnly.stderr], ['out\n', '']);
    const exit = (await timed({ file: 'sh', args: ['-c', 'exit 3'] })).result;
    assert.equal(exit.exit, 3);
  });

  it('kills the program when the signal aborts, and tells when it started', async () => {
    const controller = new AbortController();
    let started = false;
    const running = timed({
      file: 'sleep',
      args: ['30'],
      signal: controller.signal,
      onSpawn: () => {
        started = true;
        controller.abort();
      },
    });
    const { result, ms } = await running;
    assert.equal(started, true);
    assert.equal(result.aborted, true);
    assert.equal(result.timedOut, false);
    assert.ok(ms < 3_000, `took ${ms} ms`);
  });

  it('rejects when the program cannot be started', async () => {
    await assert.rejects(runHostProcess({ ...base, file: '/nonexistent/tbx-no-such-program', args: [] }), /ENOENT/);
  });
});
