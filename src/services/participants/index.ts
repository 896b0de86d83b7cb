export * from './agents';
export * from './onboarding';
export * from './participants';
