export * from './outbox';
export * from './relay';
