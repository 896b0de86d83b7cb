/**
 * An esquery selector for a `.query(` call whose result is used untyped (TypeORM answers `any`): no
 * type argument, not a statement of its own, not assigned to an annotated variable, not cast. Plain
 * ESM so that eslint.config.mjs (the lint rule) and scripts/shape-figures.ts (the count) share it.
 */
export const UNTYPED_QUERY = [
  "CallExpression[callee.property.name='query']:not([typeArguments])",
  ':not(ExpressionStatement > AwaitExpression > CallExpression)',
  ':not(ExpressionStatement > CallExpression)',
  ':not(VariableDeclarator[id.typeAnnotation] > AwaitExpression > CallExpression)',
  ':not(TSAsExpression > AwaitExpression > CallExpression)',
  ':not(TSAsExpression > CallExpression)',
].join('');
