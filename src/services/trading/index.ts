/** Trades and limit orders: the API side (submit, dry run), the lane worker side (apply), recovery. */
export type * from '../../domain/outcomes';
export * from './tradeRequests';
export * from './submitTrade';
export * from './applyTrade';
export * from './tradeBatches';
export * from './recoverTrades';
export * from './placeOrder';
export * from './positions';
