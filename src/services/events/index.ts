export * from './outbox';
export * from './sequencer';
export * from './feed';
export * from './stream';
