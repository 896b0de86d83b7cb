export * from './settings';
export * from './workspaces';
