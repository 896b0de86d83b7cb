export * from './groups';
export * from './keys';
export * from './rateLimit';
export * from './viewLinks';
export * from './participantKeys';
export * from './callerCache';
export * from './policy';
export * as policies from './policies';
export { rules, type AuthLabel, type AuthRule } from './policies';
