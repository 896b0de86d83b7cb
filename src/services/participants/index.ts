export * from './agents';
export * from './identity';
export * from './onboarding';
export * from './participants';
export * from './onboardParticipant';
export * from './participantAccounts';
export * from './participantFamily';
