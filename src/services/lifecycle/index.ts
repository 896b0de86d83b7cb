/** A book's life: horizons spawned and retired, due books resolved, early settlement, metric changes. */
export * from './spawnBooks';
export * from './refreshHorizons';
export * from './endBooks';
export * from './resolveBook';
export * from './metricBooks';
export * from './lanes';
export * from './fundBooks';
export * from './manualBooks';
export * from './refreshThrottle';
