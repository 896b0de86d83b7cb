export * from './metrics';
export * from './readings';
