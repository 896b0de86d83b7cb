export * from './proposals';
export * from './scorecard';
export * from './browseProposals';
