import type { Deps } from '../../deps';
import { inTransaction } from '../../db/tx';
import { DomainError } from '../../errors';
import { createWorkspace } from '../workspaces';
import { applyTemplate, resolveTemplate } from './applyTemplate';

/**
 * POST /workspaces: a new workspace owned by the caller, with its groups and, when asked, a template
 * applied exactly as POST /onboard applies it (its metrics, starting values, starter proposal), all in
 * one transaction: a template that fails leaves no workspace behind.
 */
export async function openWorkspace(
  deps: Deps,
  ownerId: string,
  input: Parameters<typeof createWorkspace>[2] & { template?: string; templateParams?: Record<string, unknown> },
) {
  const { template, templateParams, ...fields } = input;
  if (templateParams !== undefined && template === undefined) {
    throw new DomainError('validation_failed', 'templateParams go with a template: name one (GET /onboard/templates lists them).');
  }
  const templateId = template === undefined ? null : resolveTemplate(template).id;
  return inTransaction(deps.ds, async (m) => {
    const ws = await createWorkspace(m, ownerId, fields);
    const applied = templateId ? await applyTemplate(deps, m, ws, templateId, templateParams) : { metricsCreated: 0, starterProposalId: null };
    return { ...ws, template: templateId, ...applied };
  });
}
