import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * A read scope (issue 60): a GET route's handler or a page, whose single statements may read a
 * streaming replica (src/db/replicas.ts decides which, and whether one is current enough). Kept
 * apart from db/ so the API and the pages can open one without touching the database layer.
 */
export interface ReadScope {
  /** The replica (or null: the primary) the scope reads, decided at its first statement. */
  choice?: Promise<unknown>;
  /** The rest of the scope reads the primary: it wrote, or a replica failed it. */
  primary: boolean;
}

const scopes = new AsyncLocalStorage<ReadScope>();

/** Run fn as a read scope. Nested scopes are the outer one (a page's API calls share the page's). */
export function readScope<T>(fn: () => Promise<T>): Promise<T> {
  if (scopes.getStore()) return fn();
  return scopes.run({ primary: false }, fn);
}

/**
 * Run fn outside any read scope: on the primary. Who the caller is, its rate limit and its access
 * are decided there, also inside a page's scope (they may write, and they decide what is shown).
 */
export function outsideReadScope<T>(fn: () => Promise<T>): Promise<T> {
  return scopes.exit(fn);
}

export function currentReadScope(): ReadScope | undefined {
  return scopes.getStore();
}

/** The rest of the current read scope (if any) reads the primary: it must see what it wrote. */
export function stickToPrimary(): void {
  const s = scopes.getStore();
  if (s) s.primary = true;
}
