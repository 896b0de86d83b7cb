import { z } from 'zod';
import { SOURCE_TYPES } from '../../services/sources';
import { instant } from './output';

/** presentSource (presenters/source.ts): never the token. */
export const sourceSchema = z.object({
  id: z.string(),
  name: z.string(),
  type: z.enum(SOURCE_TYPES),
  description: z.string(),
  bytes: z.number().int().nullable().describe('Size of the text (type text), else null.'),
  repository: z.string().nullable().describe('owner/name (type github).'),
  defaultRef: z.string().nullable().describe('The ref read when none is named (type github); null reads HEAD.'),
  hasToken: z.boolean().describe('A token is stored (encrypted) for a private repository; it is never returned.'),
  createdBy: z.string().nullable(),
  createdAt: instant,
  updatedAt: instant,
});

export const sourceTextSchema = z.object({ sourceId: z.string(), name: z.string(), bytes: z.number().int(), content: z.string() });

export const treeSchema = z.object({
  sourceId: z.string(),
  repository: z.string(),
  ref: z.string(),
  path: z.string(),
  cached: z.boolean().describe('Served from the ETag cache (the host answered 304).'),
  entries: z.array(z.object({ name: z.string(), path: z.string(), type: z.enum(['file', 'dir', 'symlink', 'submodule']), size: z.number(), sha: z.string() })),
});

export const fileSchema = z.object({
  sourceId: z.string(),
  repository: z.string(),
  ref: z.string(),
  path: z.string(),
  size: z.number().int(),
  sha: z.string(),
  encoding: z.enum(['utf-8', 'base64']).describe('utf-8: content is the text; base64: a binary file, base64-encoded.'),
  content: z.string(),
  cached: z.boolean(),
});
