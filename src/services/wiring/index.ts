export * from './hooks';
export * from './registerHooks';
