/**
 * Everything a terminal (a ToolboxShellPty, or anything with onDidWrite) showed, and a way to
 * wait for a pattern in it. Bounded: waitFor gives up after timeoutMs and says what was shown.
 */
export function screen(pty: { onDidWrite(listener: (text: string) => void): unknown }) {
  let text = '';
  pty.onDidWrite((t) => (text += t));
  return {
    get text() {
      return text;
    },
    async waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const m = pattern.exec(text);
        if (m) return m;
        if (Date.now() > end) throw new Error(`the terminal never showed ${pattern}; it shows ${JSON.stringify(text.slice(-500))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}
