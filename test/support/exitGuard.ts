/**
 * A test file whose every test has ended should let its process exit. When something it started
 * still holds the event loop (seen intermittently in test/engine/remote.test.ts, not reproduced
 * with a handle dump attached), the file would hang `npm test` for ever: this says what is still
 * open on stderr and exits, some seconds after the last hook. Unref'd, so a clean file exits first.
 */
import { after } from 'node:test';

export function exitWhenDone(file: string, graceMs = 10_000): void {
  after(() => {
    setTimeout(() => {
      const handles = (process as unknown as { _getActiveHandles(): object[] })._getActiveHandles();
      const names = handles.map((h) => h.constructor?.name ?? typeof h).join(', ');
      process.stderr.write(`${file}: the tests ended but the process was still held by ${handles.length} handle(s) (${names}); exiting.\n`);
      process.exit(process.exitCode ?? 0);
    }, graceMs).unref();
  });
}
