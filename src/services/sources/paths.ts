import { DomainError } from '../../errors';

/**
 * A repository path as the bridge accepts it: relative, '/'-separated, no '.' or '..' segment, no
 * backslash, no control character, at most 1000 characters. '' (or '/') is the root. Refused with a
 * sentence, never normalised into something else.
 */
export function checkRepoPath(raw: string | undefined): string {
  const path = (raw ?? '').replace(/\/+$/, '');
  if (path === '') return '';
  const refuse = (why: string) => new DomainError('source_path_invalid', `The path "${path.slice(0, 200)}" is refused: ${why}.`, { path: path.slice(0, 200) });
  if (path.length > 1000) throw refuse('it is longer than 1000 characters');
  if (path.startsWith('/')) throw refuse('it must be relative to the repository root (no leading /)');
  if (path.includes('\\')) throw refuse('use / between segments, never a backslash');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) throw refuse('it holds a control character');
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    throw refuse('it holds a malformed %-escape');
  }
  for (const seg of decoded.split('/')) {
    if (seg === '..') throw refuse('a .. segment would leave the directory (path traversal)');
    if (seg === '.') throw refuse('a . segment is not a name');
    if (seg === '') throw refuse('it holds an empty segment (//)');
  }
  return path;
}

/**
 * A branch, tag or commit as git accepts a ref name (git check-ref-format): letters, digits and
 * . _ / -; no `..`; no component that starts with `.` or ends with `.lock`; no empty component, no
 * leading or trailing `/`, no trailing `.`. So `../main` is refused, when stored and when asked for.
 */
export function checkRef(raw: string): string {
  const parts = raw.split('/');
  const bad =
    !/^[A-Za-z0-9._/-]{1,200}$/.test(raw) ||
    raw.includes('..') ||
    raw.endsWith('.') ||
    parts.some((p) => p === '' || p.startsWith('.') || p.endsWith('.lock'));
  if (bad) {
    throw new DomainError(
      'source_path_invalid',
      `The ref "${raw.slice(0, 200)}" is refused: a branch, tag or commit of letters, digits, . _ / - as git allows (no .., no part starting with . or ending in .lock, no empty part).`,
      { ref: raw.slice(0, 200) },
    );
  }
  return raw;
}

/** owner/name as GitHub spells them; `.` and `..` are no repository names. */
const REPOSITORY_SHAPE = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/;
export function isRepository(repo: string): boolean {
  return REPOSITORY_SHAPE.test(repo) && !['.', '..'].includes(repo.split('/')[1]);
}
