/**
 * Startup: a fresh Node process per sample requires the bundle and runs activate() against a
 * stand-in vscode module; the backend bundle's first-use load is timed in the same process.
 * Also the bundle sizes.
 */
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { fmtMs, spreadOf, stats, type ResultRow } from './harness';

export async function benchStartup(): Promise<ResultRow[]> {
  const dist = join(__dirname, '../../dist');
  const child = join(__dirname, 'startupChild.js');
  const samples: Array<{ require: number; activate: number; backend: number }> = [];
  for (let i = 0; i < 12; i++) {
    const out = childOutput(child, dist);
    if (i >= 2) samples.push(JSON.parse(out.trim().split('\n').pop()!));
  }
  const startup = stats(samples.map((s) => s.require + s.activate));
  const backend = stats(samples.map((s) => s.backend));
  const kib = (f: string) => statSync(join(dist, f)).size / 1024;
  const total = kib('extension.js') + kib('backend.js');
  return [
    {
      benchmark: 'Startup',
      measure: 'require the bundle + activate() (fresh process, stand-in vscode)',
      value: fmtMs(startup.median),
      spread: spreadOf(startup),
      goal: '≤ 50 ms',
      met: startup.median <= 50,
    },
    {
      benchmark: 'Startup',
      measure: 'first command: load the backend bundle (zod, yaml, dockerode)',
      value: fmtMs(backend.median),
      spread: spreadOf(backend),
      goal: '–',
      met: undefined,
    },
    {
      benchmark: 'Bundle size',
      measure: 'dist/extension.js + dist/backend.js',
      value: `${(total / 1024).toFixed(2)} MB (${kib('extension.js').toFixed(0)} KiB + ${kib('backend.js').toFixed(0)} KiB)`,
      spread: '–',
      goal: '≤ 1.5 MB',
      met: total / 1024 <= 1.5,
    },
  ];
}

/**
 * One run of the child. It exits by itself after its line, or its exit guard fails it 10 s later
 * with what it still holds; that message is this benchmark's error. The timeout is a backstop.
 */
function childOutput(child: string, dist: string): string {
  try {
    return execFileSync(process.execPath, [child, dist], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(stderr || (err as Error).message, { cause: err });
  }
}
