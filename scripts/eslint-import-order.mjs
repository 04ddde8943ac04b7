// A local ESLint rule, `local/import-order`: a file's leading imports come in three groups, node
// built-ins (`node:…`), then packages (`vscode`, `zod`, …), then the project's own relative paths.
// Within a group the order is the author's (no alphabetizing), so a fix moves as few lines as it can.
// It lives here rather than as eslint-plugin-import-x or simple-import-sort so lint needs no new
// dependency. `--fix` reorders the block; a comment line moves with the import below it.

const groupOf = (source) => (source.startsWith('node:') ? 0 : source.startsWith('.') ? 2 : 1);
const GROUP_NAMES = ['a node built-in', 'a package', 'a relative'];

/** @type {import('eslint').Rule.RuleModule} */
const importOrder = {
  meta: {
    type: 'layout',
    fixable: 'code',
    docs: { description: 'node built-ins, then packages, then relative imports' },
    schema: [],
    messages: { order: '{{this}} import ({{source}}) comes before {{other}} import ({{before}}).' },
  },
  create(context) {
    const sourceCode = context.sourceCode;
    return {
      Program(program) {
        const imports = [];
        for (const node of program.body) {
          if (node.type !== 'ImportDeclaration') break;
          imports.push(node);
        }
        const groups = imports.map((n) => groupOf(String(n.source.value)));
        const bad = groups.findIndex((g, i) => i > 0 && g < groups[i - 1]);
        if (bad < 0) return;
        const before = imports.slice(0, bad).findIndex((_, i) => groups[i] > groups[bad]);
        const text = sourceCode.text;
        const lineEnd = (offset) => {
          const nl = text.indexOf('\n', offset);
          return nl < 0 ? text.length : nl;
        };
        // Each import with the lines above it (back to the previous import's line) and the rest of its own line.
        const chunks = [];
        let start = imports[0].range[0];
        for (const node of imports) {
          const end = lineEnd(node.range[1]);
          chunks.push(text.slice(start, end).replace(/^\s*\n/, ''));
          start = end + 1;
        }
        const sorted = chunks.map((chunk, i) => ({ chunk, g: groups[i], i })).sort((a, b) => a.g - b.g || a.i - b.i);
        context.report({
          node: imports[bad],
          messageId: 'order',
          data: {
            this: GROUP_NAMES[groups[bad]],
            source: String(imports[bad].source.value),
            other: GROUP_NAMES[groups[before]],
            before: String(imports[before].source.value),
          },
          fix: (fixer) =>
            fixer.replaceTextRange(
              [imports[0].range[0], lineEnd(imports[imports.length - 1].range[1])],
              sorted.map((s) => s.chunk).join('\n'),
            ),
        });
      },
    };
  },
};

export default { rules: { 'import-order': importOrder } };
