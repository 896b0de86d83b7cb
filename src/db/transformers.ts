import type { ValueTransformer } from 'typeorm';

/** Postgres bigint <-> JS bigint; pg returns int8 as a string, never a lossy number. */
export const bigintTransformer: ValueTransformer = {
  to: (v: bigint | null | undefined) => (v === null || v === undefined ? v : v.toString()),
  from: (v: string | null) => (v === null ? null : BigInt(v)),
};
