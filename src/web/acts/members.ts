import type Koa from 'koa';
import type { Deps } from '../../deps';
import { DomainError } from '../../errors';
import { apiAct, apiRead, type Visitor } from '../api';
import type { FormState } from '../forms';
import { fmtInstant } from '../format';
import { html, type Html } from '../html';
import type { PageParts } from '../layout';
import { backDone, basics, doneNote, field, hasCredentials, signInTo, wholeRefusal, workspaceSlug } from './common';
import { deleteGroupsByIdMembersByAgentId, deleteWorkspacesCurrentMembersByAgentId, getAgents, getGroups, getWorkspacesCurrent, postGroupsByIdMembers } from '../../api/routes';
import type { AnswerOf } from '../api';

/**
 * A workspace's members, for those who manage it (issue 65): invite by nickname into a group, or by
 * the workspace's link (a public one: whoever opens it can join), change a member's groups, remove a
 * member. Each act is the API's own (POST/DELETE /groups/{id}/members, DELETE
 * /workspaces/current/members/{agentId}); the API decides who may do what.
 */

type Member = AnswerOf<typeof getAgents>[number];
type Group = AnswerOf<typeof getGroups>[number];

const pageOf = (slug: string) => `/w/${slug}/members`;

function groupOptions(groups: Group[], except: ReadonlySet<string> = new Set()): Html[] {
  return groups.filter((g) => g.name !== 'Public' && !except.has(g.name)).map((g) => html`<option value="${g.id}">${g.name} (${g.capabilities.join(', ') || 'no capability'})</option>`);
}

function memberRow(m: Member, ownerId: string, groups: Group[], back: string, state: FormState | undefined): Html {
  const byName = new Map(groups.map((g) => [g.name, g]));
  const mine = new Set(m.groups);
  const options = groupOptions(groups, mine);
  const owner = m.id === ownerId;
  return html`<tr data-member="${m.id}"><th scope="row"><a href="/participants/${encodeURIComponent(m.id)}">${m.nickname}</a>${owner ? html` <span class="badge">owner</span>` : ''}</th>
<td><ul class="groups">${m.groups.map((name) => {
    const g = byName.get(name);
    return html`<li>${name}${
      g && !owner
        ? html` <form method="post" action="${back}" class="inline">${basics('leave-group', back)}<input type="hidden" name="agentId" value="${m.id}"><input type="hidden" name="groupId" value="${g.id}"><button type="submit" class="link" aria-label="${`Take ${m.nickname} out of ${name}`}">take out</button></form>`
        : ''
    }</li>`;
  })}</ul>
${
  options.length && !owner
    ? html`<form method="post" action="${back}" class="inline" id="${`add-group-${m.id}`}">${basics('add-group', back)}<input type="hidden" name="agentId" value="${m.id}"><label for="${`group-${m.id}`}" class="sr-only">${`Group to put ${m.nickname} in`}</label><select id="${`group-${m.id}`}" name="groupId">${options}</select> <button type="submit">Add to group</button></form>`
    : ''
}</td>
<td>${fmtInstant(m.joinedWorkspaceAt)}</td>
<td>${
    owner
      ? ''
      : html`<form method="post" action="${back}" class="inline">${basics('remove', back, state)}<input type="hidden" name="agentId" value="${m.id}"><button type="submit" aria-label="${`Remove ${m.nickname} from the workspace`}">Remove</button></form>`
  }</td></tr>`;
}

export async function membersPage(deps: Deps, v: Visitor, state?: FormState): Promise<PageParts> {
  const slug = v.workspace ?? '';
  const back = pageOf(slug);
  if (!hasCredentials(v)) return { title: 'Members', body: html`<h1>Members</h1>${signInTo(back, 'manage the members')}` };
  // Refused (403) for a visitor without manage: the page says so, as the API does.
  const [current, members, groups] = await Promise.all([
    apiRead(deps, v, getWorkspacesCurrent),
    apiRead(deps, v, getAgents),
    apiRead(deps, v, getGroups),
  ]);
  const f = 'invite';
  const invite = html`<section aria-labelledby="invite-h" id="invite"><h2 id="invite-h">Invite</h2>
${doneNote(state, f, 'Done: they are a member now, in the group you chose.')}
<form method="post" action="${back}#invite" id="invite-form">${basics(f, back, state)}
${field(state, f, 'agentId', 'Their nickname (as on their profile) or participant id', { required: true, attrs: html` autocomplete="off"` })}
<div class="field"><label for="invite-groupId">Group</label> <select id="invite-groupId" name="groupId">${groupOptions(groups)}</select></div>
${wholeRefusal(state, f, ['agentId'])}
<p><button type="submit" id="invite-button">Invite</button></p></form>
${
  current.public
    ? html`<p>Or send this link: whoever opens it and signs in can join as a trader: <a href="/w/${current.slug}" data-field="join-link">/w/${current.slug}</a>.</p>`
    : html`<p class="muted">This workspace is private: only an invitation by nickname makes someone a member. A view link (settings) lets someone read it without joining.</p>`
}</section>`;
  return {
    title: 'Members',
    workspace: { slug: current.slug, name: current.name },
    visitor: v,
    body: html`<h1>Members</h1>
${doneNote(state, 'remove', 'Done: the member is removed. What they hold here stays theirs.')}${doneNote(state, 'add-group', 'Done: added to the group.')}${doneNote(state, 'leave-group', 'Done: taken out of the group.')}
${wholeRefusal(state, 'remove', [])}${wholeRefusal(state, 'add-group', [])}${wholeRefusal(state, 'leave-group', [])}
<div class="scroll" tabindex="0" role="region" aria-label="Members (scrolls sideways on a narrow screen)"><table class="members"><caption>${members.length} member${members.length === 1 ? '' : 's'}</caption>
<thead><tr><th scope="col">Member</th><th scope="col">Groups</th><th scope="col">Joined (UTC)</th><th scope="col"><span class="sr-only">Remove</span></th></tr></thead>
<tbody>${members.map((m) => memberRow(m, current.ownerId, groups, back, state))}</tbody></table></div>
${invite}`,
  };
}

/** A form of the members page: invite, add to or take out of a group, remove. */
export async function membersAct(deps: Deps, ctx: Koa.Context, v: Visitor, values: URLSearchParams): Promise<string> {
  const back = pageOf(workspaceSlug(ctx));
  const agentId = (values.get('agentId') ?? '').trim();
  const groupId = values.get('groupId') ?? '';
  switch (values.get('form')) {
    case 'invite':
      await apiAct(deps, v, postGroupsByIdMembers, { params: { id: groupId }, body: { agentId } });
      return backDone(values, back, 'invite', 'invite');
    case 'add-group':
      await apiAct(deps, v, postGroupsByIdMembers, { params: { id: groupId }, body: { agentId } });
      return backDone(values, back, 'add-group');
    case 'leave-group':
      await apiAct(deps, v, deleteGroupsByIdMembersByAgentId, { params: { id: groupId, agentId } });
      return backDone(values, back, 'leave-group');
    case 'remove':
      await apiAct(deps, v, deleteWorkspacesCurrentMembersByAgentId, { params: { agentId } });
      return backDone(values, back, 'remove');
    default:
      throw new DomainError('validation_failed', 'This page has no such form: nothing was done.');
  }
}
