export * from './settings';
export * from './workspaces';
export * from './lookUpWorkspace';
export * from './membership';
export * from './openWorkspace';
export * from './workspaceSettings';
