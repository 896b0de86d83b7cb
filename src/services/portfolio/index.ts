export * from './portfolio';
export * from './marketPnl';
export * from './tradeHistory';
