import type Koa from 'koa';
import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { apiAct, apiRead, type Visitor } from '../api';
import type { FormState } from '../forms';
import { html, type Html } from '../html';
import { backDone, basics, doneNote, hasCredentials, signInTo, wholeRefusal, workspaceSlug } from './common';
import { getWorkspacesCurrent, postMarketplaceByWorkspaceIdJoin } from '../../api/routes';
import type { AnswerOf } from '../api';

/**
 * Joining a public workspace from its pages (issue 65): the workspace's home and each of its books
 * offer a Join button (POST /marketplace/{id}/join, as a Trader) to a visitor who may not trade there.
 */

export type Current = Pick<AnswerOf<typeof getWorkspacesCurrent>, 'id' | 'public' | 'capabilities'>;

/**
 * The join form for a visitor who may not trade in this public workspace; a sign-in link for one
 * without a session; nothing for a trader (after a join, the note that it is done).
 */
export function joinSection(v: Visitor, current: Current | null, back: string, state?: FormState): Html {
  if (!hasCredentials(v)) return signInTo(back, 'join this workspace and trade');
  if (!current || current.capabilities.includes('trade')) return doneNote(state, 'join', 'Done: you joined the workspace as a trader.');
  if (!current.public) return html`<p class="muted">You may read this workspace but not trade in it.</p>`;
  return html`<section aria-labelledby="join-h" class="act" id="join"><h2 id="join-h">Trade here</h2><form method="post" action="${back}#join" id="join-form">${basics('join', back, state)}<p>Join this workspace as a trader to trade on its books and propose. <button type="submit" id="join-button">Join the workspace</button></p>${wholeRefusal(state, 'join', [])}</form></section>`;
}

/** GET /workspaces/current for a visitor with credentials (null without: nothing to decide). */
export async function currentOf(deps: Deps, v: Visitor): Promise<Current | null> {
  return hasCredentials(v) ? apiRead(deps, v, getWorkspacesCurrent) : null;
}

/** The join itself, for the workspace of the page. */
export async function join(deps: Deps, v: Visitor): Promise<void> {
  const current = await apiRead(deps, v, getWorkspacesCurrent);
  await apiAct(deps, v, postMarketplaceByWorkspaceIdJoin, { params: { workspaceId: current.id } });
}

/** A form posted on a workspace's home: join. */
export async function workspaceAct(deps: Deps, ctx: Koa.Context, v: Visitor, values: URLSearchParams): Promise<string> {
  if (values.get('form') !== 'join') throw new DomainError('validation_failed', 'This page has no such form: nothing was done.');
  await join(deps, v);
  return backDone(values, `/w/${workspaceSlug(ctx)}`, 'join', 'join');
}
