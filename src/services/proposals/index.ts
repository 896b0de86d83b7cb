export * from './proposals';
export * from './scorecard';
