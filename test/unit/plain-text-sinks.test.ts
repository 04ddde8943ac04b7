/**
 * Every place the extension hands VS Code text to show goes through ui/plainText.ts
 * (docs/decisions/0040-outside-text-is-plain-text.md). Read from the source: in every file that
 * imports 'vscode', each text a sink shows must be a literal, a constant, or made by plainText,
 * inline or quoted (a template whose every part is one of these counts too). A new sink that
 * shows a variable fails here until the variable is wrapped. The pure builders (tree rows,
 * confirmations, the nudge) are held to the hostile corpus in test/unit/plain-text.test.ts.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

const SRC = resolve(__dirname, '../../../extension/src');

/** The functions that make outside text plain (ui/plainText.ts). */
const SANITISERS = new Set(['plainText', 'inline', 'quoted']);

/** Calls whose first argument VS Code shows as a message. */
const MESSAGE_CALLS = new Set(['showInformationMessage', 'showWarningMessage', 'showErrorMessage']);
/** Option properties VS Code shows, by the call that takes the options. */
const OPTION_CALLS: Record<string, readonly string[]> = {
  showInformationMessage: ['detail'],
  showWarningMessage: ['detail'],
  showErrorMessage: ['detail'],
  withProgress: ['title'],
  report: ['message'],
  createTerminal: ['name'],
  showInputBox: ['title', 'prompt', 'placeHolder'],
  showQuickPick: ['title', 'placeHolder'],
};
/** Properties shown wherever an object literal has them: quick pick rows, tree items. */
const SHOWN_PROPERTIES = new Set(['label', 'description', 'detail', 'tooltip']);
/** Assignments VS Code shows: status bar items, tree items, input boxes, quick picks. */
const SHOWN_ASSIGNMENTS = new Set(['text', 'tooltip', 'description', 'label', 'prompt', 'title', 'placeholder']);
/** Calls whose argument becomes a terminal's name. */
const NAME_CALLS = new Set(['rename']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const isConstantName = (name: string) => /^[A-Z][A-Z0-9_]*$/.test(name);

/** A text that needs no cleaning: a literal, a constant, a sanitiser's result, or made only of these. */
export function isPlain(e: ts.Expression): boolean {
  if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e)) return isPlain(e.expression);
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e) || ts.isNumericLiteral(e)) return true;
  if (e.kind === ts.SyntaxKind.TrueKeyword || e.kind === ts.SyntaxKind.FalseKeyword) return true;
  if (ts.isIdentifier(e)) return e.text === 'undefined' || isConstantName(e.text);
  if (ts.isTemplateExpression(e)) return e.templateSpans.every((span) => isPlain(span.expression));
  if (ts.isConditionalExpression(e)) return isPlain(e.whenTrue) && isPlain(e.whenFalse);
  if (ts.isBinaryExpression(e)) {
    const op = e.operatorToken.kind;
    if (op === ts.SyntaxKind.PlusToken || op === ts.SyntaxKind.QuestionQuestionToken || op === ts.SyntaxKind.BarBarToken) {
      return isPlain(e.left) && isPlain(e.right);
    }
    if (op === ts.SyntaxKind.AmpersandAmpersandToken) return isPlain(e.right);
    return false;
  }
  if (ts.isPropertyAccessExpression(e)) {
    if (e.name.text === 'length') return true; // a number
    let root: ts.Expression = e;
    while (ts.isPropertyAccessExpression(root)) root = root.expression;
    return ts.isIdentifier(root) && isConstantName(root.text);
  }
  if (ts.isCallExpression(e)) {
    const callee = e.expression;
    const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
    return SANITISERS.has(name) && ts.isIdentifier(callee);
  }
  return false;
}

function calleeName(call: ts.CallExpression): string {
  const c = call.expression;
  return ts.isPropertyAccessExpression(c) ? c.name.text : ts.isIdentifier(c) ? c.text : '';
}

function propertyName(p: ts.ObjectLiteralElementLike): string | undefined {
  return p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? p.name.text : undefined;
}

/** `file:line: what` for every shown text that is not plain. */
export function unplainSinks(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found: string[] = [];
  const flagged = new Set<number>();
  const flag = (node: ts.Node, what: string) => {
    if (flagged.has(node.getStart())) return; // an option object is both a call's argument and an object literal
    flagged.add(node.getStart());
    const { line } = source.getLineAndCharacterOfPosition(node.getStart());
    found.push(`${relative(SRC, file)}:${line + 1}: ${what}: ${node.getText().slice(0, 80)}`);
  };
  const checkOptions = (arg: ts.Expression | undefined, props: readonly string[], call: string) => {
    if (!arg || !ts.isObjectLiteralExpression(arg)) return;
    for (const p of arg.properties) {
      const name = propertyName(p);
      if (!name || !props.includes(name)) continue;
      if (ts.isPropertyAssignment(p) && !isPlain(p.initializer)) flag(p, `${call} ${name}`);
      if (ts.isShorthandPropertyAssignment(p)) flag(p, `${call} ${name}`);
    }
  };
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node)) {
      const name = calleeName(node);
      if (MESSAGE_CALLS.has(name) && node.arguments[0] && !isPlain(node.arguments[0])) flag(node.arguments[0], `${name} message`);
      const props = OPTION_CALLS[name];
      if (props) for (const arg of node.arguments) checkOptions(arg, props, name);
      if (NAME_CALLS.has(name) && node.arguments[0] && !isPlain(node.arguments[0])) flag(node.arguments[0], `${name} argument`);
    }
    if (ts.isNewExpression(node) && /\bTreeItem$/.test(node.expression.getText()) && node.arguments?.[0] && !isPlain(node.arguments[0])) {
      flag(node.arguments[0], 'TreeItem label');
    }
    if (ts.isObjectLiteralExpression(node)) {
      const names = node.properties.map(propertyName);
      // Terminal options made outside createTerminal (a terminal profile's): a name beside a pty.
      const shown = names.includes('pty') ? [...SHOWN_PROPERTIES, 'name'] : [...SHOWN_PROPERTIES];
      checkOptions(node, shown, 'shown property');
    }
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
      ts.isPropertyAccessExpression(node.left) &&
      SHOWN_ASSIGNMENTS.has(node.left.name.text) &&
      !isPlain(node.right)
    ) {
      flag(node, `assignment to .${node.left.name.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('every text VS Code shows goes through ui/plainText.ts', () => {
  const files = sourceFiles(SRC).filter((f) => /from 'vscode'/.test(readFileSync(f, 'utf8')));

  it('finds the files with sinks', () => {
    assert.ok(files.length > 20, `only ${files.length} files import vscode`);
    assert.ok(files.some((f) => f.endsWith('agentNudge.ts')));
  });

  it('each message, detail, title, prompt, label, description, tooltip, status bar text and terminal name is plain', () => {
    const found = files.flatMap((f) => unplainSinks(f, readFileSync(f, 'utf8')));
    assert.deepEqual(found, [], `wrap these in plainText (ui/plainText.ts):\n${found.join('\n')}`);
  });

  it('nothing in the extension builds a MarkdownString (it would render links, HTML and commands)', () => {
    const found = sourceFiles(SRC).filter((f) =>
      /\bMarkdownString\b/.test(readFileSync(f, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')),
    );
    assert.deepEqual(found, []);
  });

  it('the check itself tells plain from not plain', () => {
    const sinks = (code: string) => unplainSinks(join(SRC, 'x.ts'), `import * as vscode from 'vscode';\n${code}`);
    assert.deepEqual(sinks(`vscode.window.showErrorMessage('fixed');`), []);
    assert.deepEqual(sinks('vscode.window.showErrorMessage(`n ${plainText(x, "message")} ${list.length}`);'), []);
    assert.equal(sinks('vscode.window.showErrorMessage(err.message);').length, 1);
    assert.equal(sinks('vscode.window.showErrorMessage(`Failed: ${err.message}`);').length, 1);
    assert.equal(sinks('vscode.window.showWarningMessage(plainText(m, "message"), { modal: true, detail });').length, 1);
    assert.equal(sinks('vscode.window.createTerminal({ name: title, pty });').length, 1);
    assert.equal(sinks('item.tooltip = status.tooltip;').length, 1);
    assert.equal(sinks('const picks = list.map((c) => ({ label: c.name }));').length, 1);
    assert.equal(sinks('progress.report({ message: line });').length, 1);
    assert.equal(sinks('const item = new vscode.TreeItem(node.label);').length, 1);
    assert.deepEqual(sinks(`item.text = COMMAND_LABELS.x.label;`), []);
  });
});
