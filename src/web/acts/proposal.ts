import type Koa from 'koa';
import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { apiAct, apiRead, type Visitor } from '../api';
import type { FormState } from '../forms';
import { fmtInstant } from '../format';
import { html, type Html } from '../html';
import { backDone, basics, doneNote, field, hasCredentials, signInTo, wholeRefusal, workspaceSlug } from './common';
import { getAgentsMe, getProposalsById, getProposalsByIdComments, getWorkspacesCurrent, postProposalsByIdApprove, postProposalsByIdComments, postProposalsByIdDecline, postProposalsByIdWithdraw } from '../../api/routes';
import type { AnswerOf } from '../api';

/**
 * Discussing and deciding a proposal from its page (issue 59): the comments as a thread with a reply
 * form under each, a comment form, and approve, decline or withdraw for a visitor whose capabilities
 * (GET /workspaces/current) allow it. The API decides every act all the same.
 */

type Comment = AnswerOf<typeof getProposalsByIdComments>[number];
type ProposalLike = Pick<AnswerOf<typeof getProposalsById>, 'id' | 'status' | 'proposedBy'>;

/** Replies nest under the comment they answer, oldest first; a reply whose parent is not listed stands at the top. */
function thread(comments: Comment[], back: string, open: boolean, state: FormState | undefined): Html {
  const ids = new Set(comments.map((c) => c.id));
  const children = new Map<string | null, Comment[]>();
  for (const c of comments) {
    const parent = c.parentId && ids.has(c.parentId) ? c.parentId : null;
    children.set(parent, [...(children.get(parent) ?? []), c]);
  }
  const replyForm = (c: Comment) => {
    const f = `reply-${c.id}`;
    const sent = state?.form === f;
    return html`<details${sent && state?.refusal ? html` open` : ''}><summary>Reply</summary><form method="post" action="${back}#c-${c.id}">${basics(f, back, state)}<input type="hidden" name="parentId" value="${c.id}">
${field(state, f, 'body', `Reply to ${c.authorNickname ?? 'this comment'}`, { textarea: true, required: true })}${wholeRefusal(state, f, ['body'])}<p><button type="submit">Post the reply</button></p></form></details>`;
  };
  const draw = (parent: string | null, depth: number): Html => {
    const list = children.get(parent) ?? [];
    if (!list.length) return html``;
    return html`<ol class="comments${depth ? ' replies' : ''}">${list.map(
      (c) =>
        html`<li id="c-${c.id}" data-comment="${c.id}"><article><p class="meta"><strong>${c.authorNickname ?? 'someone'}</strong> <small class="muted">${fmtInstant(c.createdAt)}</small></p><p class="body">${c.body}</p>${open ? replyForm(c) : ''}</article>${draw(c.id, depth + 1)}</li>`,
    )}</ol>`;
  };
  return comments.length ? draw(null, 0) : html`<p class="muted">No comments yet.</p>`;
}

function decisionForms(p: ProposalLike, back: string, caps: Set<string>, me: string | null, state: FormState | undefined): Html {
  if (p.status !== 'pending') return html``;
  const manage = caps.has('manage');
  const withdraw = manage || (caps.has('trade') && me !== null && me === p.proposedBy);
  if (!manage && !withdraw) return html``;
  const button = (form: string, id: string, label: string, extra: Html = html``) =>
    html`<form method="post" action="${back}#decide" class="inline">${basics(form, back, state)}${extra}<button type="submit" id="${id}">${label}</button></form>`;
  return html`<div class="decide" id="decide">
${manage ? button('approve', 'approve-button', 'Approve') : ''}
${manage ? button('decline', 'decline-button', 'Decline') : ''}
${manage ? button('decline', 'decline-spam-button', 'Decline as spam', html`<input type="hidden" name="spam" value="true">`) : ''}
${withdraw ? button('withdraw', 'withdraw-button', 'Withdraw') : ''}
${['approve', 'decline', 'withdraw'].map((f) => wholeRefusal(state, f, []))}
</div>`;
}

/** The comments and decision part of a proposal page for this visitor. */
export async function proposalActs(deps: Deps, v: Visitor, p: ProposalLike, slug: string, state?: FormState): Promise<Html> {
  const back = `/w/${slug}/proposals/${p.id}`;
  const signed = hasCredentials(v);
  // The three reads at once (a signed-in proposal page was over its 50 ms render budget with them one after another).
  const [comments, current, me] = await Promise.all([
    apiRead(deps, v, getProposalsByIdComments, { params: { id: p.id }, query: { limit: '500' } }),
    signed ? apiRead(deps, v, getWorkspacesCurrent) : { capabilities: [] },
    signed ? apiRead(deps, v, getAgentsMe) : null,
  ]);
  const caps = new Set(current.capabilities);
  const open = signed && caps.has('trade') && p.status === 'pending';
  const f = 'comment';
  const commentForm = !signed
    ? signInTo(back, 'comment')
    : open
      ? html`<form method="post" action="${back}#discussion" id="comment-form">${basics(f, back, state)}
${field(state, f, 'body', 'Your comment', { textarea: true, required: true })}${wholeRefusal(state, f, ['body'])}
<p><button type="submit">Post the comment</button></p></form>`
      : html`<p class="muted">${p.status === 'pending' ? 'Commenting needs the trade capability in this workspace.' : 'The proposal is decided: the discussion is closed.'}</p>`;
  return html`${doneNote(state, 'approve', 'Done: approved.')}${doneNote(state, 'decline', 'Done: declined.')}${doneNote(state, 'withdraw', 'Done: withdrawn.')}
${signed ? decisionForms(p, back, caps, me?.id ?? null, state) : ''}
<section aria-labelledby="discussion-h" id="discussion"><h2 id="discussion-h">Discussion (${comments.length})</h2>
${doneNote(state, 'comment', 'Done: your comment is posted.')}
${thread(comments, back, open, state)}
${commentForm}</section>`;
}

/** A form posted on a proposal page: a comment or a reply, approve, decline (as spam), withdraw. */
export async function proposalAct(deps: Deps, ctx: Koa.Context, v: Visitor, values: URLSearchParams): Promise<string> {
  const slug = workspaceSlug(ctx);
  const id = String(ctx.params.id);
  const page = `/w/${slug}/proposals/${id}`;
  const form = values.get('form') ?? '';
  if (form === 'comment' || form.startsWith('reply-')) {
    const parentId = form === 'comment' ? undefined : (values.get('parentId') ?? undefined);
    const c = await apiAct(deps, v, postProposalsByIdComments, { params: { id }, body: { body: values.get('body') ?? '', parentId } });
    return backDone(values, page, 'comment', `c-${c.id}`);
  }
  if (form === 'approve' || form === 'decline' || form === 'withdraw') {
    const params = { id };
    if (form === 'approve') await apiAct(deps, v, postProposalsByIdApprove, { params });
    else if (form === 'decline') await apiAct(deps, v, postProposalsByIdDecline, { params, body: { spam: values.get('spam') === 'true' } });
    else await apiAct(deps, v, postProposalsByIdWithdraw, { params });
    return backDone(values, page, form, 'decision-h');
  }
  throw new DomainError('validation_failed', 'This page has no such form: nothing was done.');
}
