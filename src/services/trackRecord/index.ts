export * from './keepTrackRecord';
export * from './readTrackRecord';
