export * from './accounts';
export * from './idempotency';
export * from './moveCredits';
export * from './wallets';
export * from './deposits';
export * from './withdrawals';
export * from './treasury';
export * from './recoverChainJobs';
export { walletOf } from './chainAccess';
