export * from './portfolio';
export * from './agentPositions';
export * from './marketPnl';
export * from './tradeHistory';
