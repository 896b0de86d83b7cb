export * from './settings';
export * from './workspaces';
export * from './membership';
export * from './rows';
export * from './structureWrites';
