import { Index } from 'typeorm';

/**
 * An index that @Index cannot describe: one on expressions (lower(name), coalesce(...)) or with
 * DESC keys. TypeORM's schema builder cannot compare such an index (it sees expression keys not at
 * all and ignores key order), so the entity names it with synchronize: false and records its SQL here;
 * test/integration/schema.test.ts has Postgres render this definition and compares it with the index
 * the migrations built.
 */
export interface SqlIndexDefinition {
  target: object;
  name: string;
  /** The parenthesised key list, as in CREATE INDEX ... ON table <on>. */
  on: string;
  unique: boolean;
  where?: string;
}

export const sqlIndexes: SqlIndexDefinition[] = [];

export function SqlIndex(name: string, on: string, options: { unique?: boolean; where?: string } = {}): ClassDecorator {
  const unique = options.unique ?? false;
  // Index's typing admits synchronize: false alone; unique and where are still recorded (metadata only).
  const indexOptions = { synchronize: false as const, unique, where: options.where };
  const index = Index(name, indexOptions);
  return (target) => {
    sqlIndexes.push({ target, name, on, unique, where: options.where });
    index(target);
  };
}

/** The CREATE INDEX statement of a SqlIndex on the given table (optionally under another name). */
export function sqlIndexStatement(def: SqlIndexDefinition, table: string, name = def.name): string {
  return `CREATE ${def.unique ? 'UNIQUE ' : ''}INDEX "${name}" ON "${table}" ${def.on}${def.where ? ` WHERE ${def.where}` : ''}`;
}
