/** Types of untypedQuery.mjs (shared by eslint.config.mjs and scripts/shape-figures.ts). */
export declare const UNTYPED_QUERY: string;
