export * from './sources';
export * from './github';
export { checkRepoPath, checkRef } from './paths';
