export * from './metrics';
export * from './readings';
export * from './browseMetrics';
export * from './manageMetrics';
export * from './settleMetric';
