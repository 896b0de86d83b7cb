export * from './ledger';
export * from './writeLedger';
