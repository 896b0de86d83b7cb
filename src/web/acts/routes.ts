import type Router from '@koa/router';
import type Koa from 'koa';
import type { Deps } from '../../deps';
import { visitorOf, type Visitor } from '../api';
import type { FormState } from '../forms';
import type { PageParts } from '../layout';
import { marketPage, metricPage, proposalPage, workspaceHome } from '../pages';
import { workspaceAct } from './join';
import { membersAct, membersPage } from './members';
import { doneOf, reviewOf, workspaceSlug } from './common';
import { newMetricAct, newMetricPage, newProposalAct, newProposalPage, newWorkspaceAct, newWorkspacePage } from './create';
import { marketAct } from './market';
import { proposalAct } from './proposal';
import { settleAct } from './settle';
import { transferAct, transferPage, transferRequestOf } from './transfer';
import { creditsAct, creditsPage, CREDITS_PAGE } from './credits';

/** What index.ts lends the acting routes (passed in, so these files never import it back). */
export interface PageKit {
  page: (deps: Deps, render: (deps: Deps, ctx: Koa.Context) => Promise<PageParts>) => Koa.Middleware;
  formPost: (
    deps: Deps,
    visitorFor: (ctx: Koa.Context) => Visitor,
    act: (deps: Deps, ctx: Koa.Context, v: Visitor, values: URLSearchParams) => Promise<string | { show: unknown; at?: string }>,
    redraw: (deps: Deps, ctx: Koa.Context, v: Visitor, state: FormState) => Promise<PageParts>,
  ) => Koa.Middleware;
}

/**
 * The acting pages and the form posts of the pages (issue 59). Registered before the pages' own
 * routes: /w/:ws/metrics/new and /w/:ws/proposals/new must win over /w/:ws/metrics/:id.
 */
export function actRoutes(router: Router, deps: Deps, kit: PageKit): void {
  const { page, formPost } = kit;
  const inWorkspace = (ctx: Koa.Context) => visitorOf(ctx, workspaceSlug(ctx));
  const siteWide = (ctx: Koa.Context) => visitorOf(ctx, null);

  router.get('/workspaces/new', page(deps, (d, ctx) => newWorkspacePage(d, siteWide(ctx))));
  router.post('/workspaces/new', formPost(deps, siteWide, newWorkspaceAct, (d, _ctx, v, s) => newWorkspacePage(d, v, s)));
  router.get('/w/:ws/metrics/new', page(deps, async (d, ctx) => {
    const v = inWorkspace(ctx);
    return newMetricPage(d, v, (await reviewOf(d, ctx, v, newMetricAct, ['metric'])) ?? doneOf(ctx));
  }));
  router.post('/w/:ws/metrics/new', formPost(deps, inWorkspace, newMetricAct, (d, _ctx, v, s) => newMetricPage(d, v, s)));
  router.get('/w/:ws/proposals/new', page(deps, async (d, ctx) => {
    const v = inWorkspace(ctx);
    return newProposalPage(d, v, (await reviewOf(d, ctx, v, newProposalAct, ['proposal'])) ?? doneOf(ctx));
  }));
  router.post('/w/:ws/proposals/new', formPost(deps, inWorkspace, newProposalAct, (d, _ctx, v, s) => newProposalPage(d, v, s)));
  router.get('/w/:ws/members', page(deps, (d, ctx) => membersPage(d, inWorkspace(ctx), doneOf(ctx))));
  router.post('/w/:ws/members', formPost(deps, inWorkspace, membersAct, (d, _ctx, v, s) => membersPage(d, v, s)));
  router.post('/w/:ws', formPost(deps, inWorkspace, workspaceAct, (d, _ctx, v, s) => workspaceHome(d, v, s)));
  router.post('/w/:ws/markets/:id', formPost(deps, inWorkspace, marketAct, (d, ctx, v, s) => marketPage(d, v, String(ctx.params.id), s)));
  router.post('/w/:ws/metrics/:id', formPost(deps, inWorkspace, settleAct, (d, ctx, v, s) => metricPage(d, v, String(ctx.params.id), s)));
  router.post('/w/:ws/proposals/:id', formPost(deps, inWorkspace, proposalAct, (d, ctx, v, s) => proposalPage(d, v, String(ctx.params.id), s)));
  router.get(CREDITS_PAGE, page(deps, (d, ctx) => creditsPage(d, siteWide(ctx), doneOf(ctx))));
  router.post(CREDITS_PAGE, formPost(deps, siteWide, creditsAct, (d, _ctx, v, s) => creditsPage(d, v, s)));
  router.get('/transfer', page(deps, (d, ctx) => transferPage(d, siteWide(ctx), doneOf(ctx) ?? transferRequestOf(ctx))));
  router.post('/transfer', formPost(deps, siteWide, transferAct, (d, _ctx, v, s) => transferPage(d, v, s)));
}
