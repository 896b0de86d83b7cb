/** Identities and keys: agents created, keys minted and resolved, the platform operator. Access and participants both build on it. */
export * from './identity';
export * from './writes';
