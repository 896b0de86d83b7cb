import { z } from 'zod';
import { DomainError } from '../../errors';
import { policies } from '../../services/access';
import { createSource, deleteSource, getSource, listSources, MAX_TEXT_BYTES, repoFile, repoTree, SOURCE_TYPES, sourceText, updateSource } from '../../services/sources';
import { presentFile, presentSource, presentSourceText, presentTree } from '../presenters/source';
import { defineRoute, type Call } from '../registry';
import { fileSchema, sourceSchema, sourceTextSchema, treeSchema } from '../schemas/sources';

const idParam = z.object({ id: z.string().min(1).max(100) });
const name = z.string({ error: 'is required' }).trim().min(1, 'must not be blank').max(120, 'must be at most 120 characters');
const description = z.string().max(5000, 'must be at most 5000 characters');
const content = z.string({ error: 'must be a string' });
const repository = z.string().trim().max(200);
const ref = z.string().trim().min(1).max(200);
const token = z.string().trim().min(1, 'must not be blank (send null to remove it)').max(500);
const browseQuery = z.object({ ref: z.string().max(200).optional(), path: z.string().max(1000).optional() });
const SOURCE_ERRORS = [
  'not_found',
  'source_path_invalid',
  'source_file_too_large',
  'source_upstream_failed',
  'source_upstream_invalid',
  'source_upstream_redirect',
  'source_upstream_refused',
  'source_upstream_tls',
  'source_upstream_timeout',
  'source_upstream_rate_limited',
  'source_token_key_missing',
  'source_token_unreadable',
] as const;

/** Per-source read (group sourcePermissions): a source the caller may not read does not exist for it. */
function readable(c: Call<unknown, unknown, { id: string }>): string {
  if (!c.workspace().sourceReadable(c.params.id)) throw new DomainError('not_found', `Source ${c.params.id} was not found.`);
  return c.params.id;
}

export const getSources = defineRoute({
  method: 'GET',
  path: '/sources',
  auth: policies.sources.list,
  response: z.array(sourceSchema),
  errors: [],
  summary: "The workspace's sources the caller may read (group sourcePermissions), oldest first. Always needs an identity.",
  handler: async (c) => {
    const access = c.workspace();
    return (await listSources(c.deps, access.workspace.id)).filter((s) => access.sourceReadable(s.id)).map(presentSource);
  },
});

export const postSources = defineRoute({
  method: 'POST',
  path: '/sources',
  auth: policies.sources.create,
  successStatus: 201,
  response: sourceSchema,
  errors: ['source_token_key_missing', 'source_path_invalid'],
  summary: `Create a source: { name, type: text|github, description? }; text takes content (markdown, at most ${MAX_TEXT_BYTES} bytes); github takes repository (owner/name), defaultRef?, token? (for a private repository; stored encrypted, never returned). 201 with the source.`,
  body: z.strictObject({
    name,
    type: z.enum(SOURCE_TYPES, { error: `must be one of ${SOURCE_TYPES.join(', ')}` }),
    description: description.optional(),
    content: content.optional(),
    repository: repository.optional(),
    defaultRef: ref.optional(),
    token: token.optional(),
  }),
  handler: async (c) => {
    const row = await createSource(c.deps, { ...c.body, workspaceId: c.workspace().workspace.id, agentId: c.identity().agentId });
    c.status(201);
    return presentSource(row);
  },
});

export const getSourcesById = defineRoute({
  method: 'GET',
  path: '/sources/:id',
  auth: policies.sources.read,
  params: idParam,
  response: sourceSchema,
  errors: ['not_found'],
  summary: 'One source (never its token).',
  handler: async (c) => presentSource(await getSource(c.deps, c.workspace().workspace.id, readable(c))),
});

export const putSourcesById = defineRoute({
  method: 'PUT',
  path: '/sources/:id',
  auth: policies.sources.set,
  params: idParam,
  response: sourceSchema,
  errors: ['not_found', 'source_token_key_missing', 'source_path_invalid'],
  summary: 'Update a source: { name?, description?, content? (text), repository?, defaultRef? (null: HEAD), token? (github; null removes it) }. The type is fixed. The repository cache of the source is dropped.',
  body: z.strictObject({
    name: name.optional(),
    description: description.optional(),
    content: content.optional(),
    repository: repository.optional(),
    defaultRef: ref.nullable().optional(),
    token: token.nullable().optional(),
  }),
  handler: async (c) => presentSource(await updateSource(c.deps, c.workspace().workspace.id, c.params.id, c.body)),
});

export const deleteSourcesById = defineRoute({
  method: 'DELETE',
  path: '/sources/:id',
  auth: policies.sources.remove,
  params: idParam,
  errors: ['not_found'],
  summary: 'Delete a source (and its cached repository answers). 204.',
  handler: async (c) => {
    await deleteSource(c.deps, c.workspace().workspace.id, c.params.id);
    c.status(204);
    return undefined;
  },
});

export const getSourcesByIdText = defineRoute({
  method: 'GET',
  path: '/sources/:id/text',
  auth: policies.sources.readText,
  params: idParam,
  response: sourceTextSchema,
  errors: ['not_found'],
  summary: "A text source's markdown: { sourceId, name, bytes, content }.",
  handler: async (c) => presentSourceText(await sourceText(c.deps, c.workspace().workspace.id, readable(c))),
});

export const getSourcesByIdTree = defineRoute({
  method: 'GET',
  path: '/sources/:id/tree',
  auth: policies.sources.readTree,
  params: idParam,
  query: browseQuery,
  response: treeSchema,
  errors: [...SOURCE_ERRORS],
  summary:
    "A github source's directory: query ref (branch, tag or commit; default the source's defaultRef, else HEAD) and path (relative, '' for the root). Entries { name, path, type: file|dir|symlink|submodule, size, sha }, directories first. A path with a .. or . segment, a backslash or a leading / is refused (400 source_path_invalid).",
  handler: async (c) => presentTree(await repoTree(c.deps, c.workspace().workspace.id, readable(c), c.query)),
});

export const getSourcesByIdFile = defineRoute({
  method: 'GET',
  path: '/sources/:id/file',
  auth: policies.sources.readFile,
  params: idParam,
  query: browseQuery,
  response: fileSchema,
  errors: [...SOURCE_ERRORS],
  summary:
    "A file of a github source at a ref: { path, size, sha, encoding: utf-8|base64, content }. Files over SOURCE_MAX_FILE_BYTES (default 1 MB) are refused (413 source_file_too_large), and so are traversing paths (400 source_path_invalid).",
  handler: async (c) => presentFile(await repoFile(c.deps, c.workspace().workspace.id, readable(c), c.query)),
});
