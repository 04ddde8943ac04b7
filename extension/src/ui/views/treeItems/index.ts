/**
 * Tree item properties as pure functions of the model: label, description, icon, contextValue
 * and tooltip. The providers only copy these onto vscode.TreeItems, so every `when` clause in
 * package.json can be checked against test/unit/tree-items.test.ts without a VS Code.
 */
export * from './containers';
export * from './peer';
export * from './sessions';
export * from './proximo';
export * from './reach';
export * from './dockerChildren';
export * from './approvals';
export * from './egress';
