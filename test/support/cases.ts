import { it } from 'node:test';

/**
 * One `it` per row of a case table: each titled `title(...row)` and running `check(...row)`.
 * What is asserted comes first and the table last, so a long table does not hide the check.
 */
export function itEach<Row extends readonly unknown[]>(
  title: (...row: Row) => string,
  check: (...row: Row) => void | Promise<void>,
  table: readonly Row[],
): void {
  for (const row of table) it(title(...row), () => check(...row));
}
