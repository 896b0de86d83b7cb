/** Connections (spec §2.13): MCP hosts a person connected, their keys, ask switches and call log. */
export * from './connections';
