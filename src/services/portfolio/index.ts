export * from './portfolio';
