import type { EntityManager } from 'typeorm';
import { z } from 'zod';
import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { createMetric } from '../metrics';
import { createProposal } from '../proposals';
import { TEMPLATE_IDS, templateById, type WorkspaceTemplate } from './catalog';

export interface TemplateResult {
  metricsCreated: number;
  starterProposalId: string | null;
}

/** templateParams: starting values by metric name (leaf metrics of the template), and whether to post the starter proposal. */
const paramsSchema = z.strictObject({
  values: z.record(z.string(), z.number().finite().min(0)).optional(),
  starterProposal: z.boolean().optional(),
});

export function resolveTemplate(id: string): WorkspaceTemplate {
  const t = templateById(id);
  if (!t) throw new DomainError('validation_failed', `There is no workspace template "${id}"; the templates are: ${TEMPLATE_IDS.join(', ')}.`, { templates: TEMPLATE_IDS });
  return t;
}

/**
 * Fill a new workspace from a template, inside the caller's transaction: its metrics (in order; no
 * books) and its starter proposal by the owner with liquidity 0 (discussion branches anyone may fund).
 * No metric lock (metricLock.ts): the workspace is uncommitted, so no other writer can reach its metrics.
 */
export async function applyTemplate(
  deps: Deps,
  m: EntityManager,
  workspace: { id: string; ownerId: string; externalProposals: boolean; defaultProposalLiquidity: bigint },
  templateId: string,
  rawParams: Record<string, unknown> | undefined,
): Promise<TemplateResult> {
  const t = resolveTemplate(templateId);
  const parsed = paramsSchema.safeParse(rawParams ?? {});
  if (!parsed.success) {
    throw new DomainError('validation_failed', `Invalid workspace.templateParams: ${parsed.error.issues[0].message} (accepted: { values: { "<metric name>": number }, starterProposal: boolean }).`);
  }
  const params = parsed.data;
  const leaves = new Set(t.metrics.filter((x) => !x.formula).map((x) => x.name));
  const unknown = Object.keys(params.values ?? {}).filter((n) => !leaves.has(n));
  if (unknown.length) {
    throw new DomainError('validation_failed', `templateParams.values names no leaf metric of "${t.id}": ${unknown.join(', ')}; its leaf metrics are: ${[...leaves].join(', ') || 'none'}.`);
  }
  const ids = new Map<string, string>();
  for (const spec of t.metrics) {
    const created = await createMetric(
      m,
      workspace.id,
      {
        name: spec.name,
        description: spec.description,
        value: params.values?.[spec.name] ?? spec.value ?? 0,
        formula: spec.formula,
        marketRangeMax: spec.marketRangeMax,
        timePreference: null,
      },
      { agentId: workspace.ownerId, clock: deps.clock },
    );
    ids.set(spec.name, created.metric.id);
  }
  let starterProposalId: string | null = null;
  if (t.starterProposal && params.starterProposal !== false) {
    const p = await createProposal(
      deps,
      workspace,
      { agentId: workspace.ownerId, canManage: true, metricReadable: () => true },
      { title: t.starterProposal.title, description: t.starterProposal.description, metricIds: t.starterProposal.expects.map((n) => ids.get(n)!), liquidity: 0 },
      { manager: m },
    );
    starterProposalId = p.id;
  }
  return { metricsCreated: t.metrics.length, starterProposalId };
}
