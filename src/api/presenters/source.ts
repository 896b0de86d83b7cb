import type { RepoFile, RepoListing, SourceRow } from '../../services/sources';

export function presentSource(s: SourceRow) {
  return {
    id: s.id,
    name: s.name,
    type: s.type,
    description: s.description,
    bytes: s.contentBytes,
    repository: s.repository,
    defaultRef: s.defaultRef,
    hasToken: s.hasToken,
    createdBy: s.createdBy,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

export function presentSourceText(r: { source: SourceRow; content: string }) {
  return { sourceId: r.source.id, name: r.source.name, bytes: r.source.contentBytes ?? 0, content: r.content };
}

export function presentTree(t: RepoListing) {
  return { sourceId: t.source.id, repository: t.source.repository ?? '', ref: t.ref, path: t.path, cached: t.cached, entries: t.entries };
}

export function presentFile(f: RepoFile) {
  return { sourceId: f.source.id, repository: f.source.repository ?? '', ref: f.ref, path: f.path, size: f.size, sha: f.sha, encoding: f.encoding, content: f.content, cached: f.cached };
}
