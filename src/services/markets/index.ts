export * from './books';
export * from './horizonPass';
export * from './lanes';
export * from './placeTrade';
export * from './resolveBook';
export * from './spawnBooks';
