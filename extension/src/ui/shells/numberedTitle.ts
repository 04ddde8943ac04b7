/**
 * The terminal name for a new shell: `base` while no terminal of this window has it, then
 * `base (2)`, `base (3)`, … (the lowest number free), so two shells never look the same.
 */
export function numberedTitle(base: string, taken: Iterable<string>): string {
  const names = new Set(taken);
  if (!names.has(base)) return base;
  for (let n = 2; ; n++) if (!names.has(`${base} (${n})`)) return `${base} (${n})`;
}
