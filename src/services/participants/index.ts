export * from './agents';
export * from './identity';
export * from './onboarding';
export * from './participants';
