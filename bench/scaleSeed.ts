/**
 * A deployment's data at a chosen size, seeded by SQL (issue 60): participants, public workspaces
 * with metrics and members, books (most resolved, some open), trades with their positions, proposals
 * and published events. Shared by bench/scale.ts (100,000 participants, 10,000 workspaces, 100,000
 * books, 5,000,000 trades at --factor 1) and test/integration/plans.test.ts (a few tens of thousands
 * of rows: enough for the planner to see every large table as large).
 */

export interface ScaleSizes {
  participants: number;
  workspaces: number;
  books: number;
  trades: number;
  /** Of the books, this many stay open (the rest resolved over 2026). */
  open: number;
  metricsPerWorkspace: number;
  proposalsPerWorkspace: number;
  /** One published event per this many trades. */
  tradesPerEvent: number;
  /** Track-record rows (issue 68) per proposal and metric: decided pairs over 2026, most realised. */
  recordsPerPair: number;
}

export function sizesAt(factor: number): ScaleSizes {
  const n = (x: number) => Math.max(1, Math.round(x * factor));
  return {
    participants: n(100_000),
    workspaces: n(10_000),
    books: n(100_000),
    trades: n(5_000_000),
    open: n(10_000),
    metricsPerWorkspace: 2,
    proposalsPerWorkspace: 2,
    tradesPerEvent: 10,
    recordsPerPair: 50,
  };
}

type Q = (sql: string, params?: unknown[]) => Promise<unknown>;

/** Seed the sizes into a migrated, empty database; participants are p1..pN, the owner 'scale-owner'. */
export async function seedScale(q: Q, s: ScaleSizes, log: (line: string) => void = () => undefined): Promise<void> {
  const step = async (what: string, sql: string, params: unknown[] = []) => {
    const t0 = performance.now();
    await q(sql, params);
    log(`  ${what} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  };
  await step('participants', `INSERT INTO agents (id, nickname) SELECT 'p' || i, 'scale-' || i FROM generate_series(1, $1::int) i UNION ALL SELECT 'scale-owner', 'scale-owner'`, [s.participants]);
  await step('accounts', `INSERT INTO accounts (id, kind, balance) SELECT 'agent:' || id, 'participant', 1000000000000 FROM agents WHERE id = 'scale-owner' OR id ~ '^p[0-9]+$'`);
  await step(
    'workspaces',
    `INSERT INTO workspaces (slug, name, public, owner_id, default_liquidity, default_proposal_liquidity)
     SELECT 'scale-ws-' || i, 'Scale ' || i, true, 'scale-owner', 100000000000, 100000000000 FROM generate_series(1, $1::int) i`,
    [s.workspaces],
  );
  await q(`CREATE TEMP TABLE scale_workspaces AS SELECT row_number() OVER (ORDER BY slug) - 1 AS n, id FROM workspaces; CREATE INDEX ON scale_workspaces (n)`);
  await step('memberships', `INSERT INTO memberships (workspace_id, agent_id) SELECT w.id, 'p' || i FROM generate_series(1, $1::int) i JOIN scale_workspaces w ON w.n = i % $2::int`, [s.participants, s.workspaces]);
  await step(
    'metrics',
    `INSERT INTO metrics (workspace_id, name, value, total, sort_order, measured_at) SELECT w.id, 'm' || k, 500, 500, k, timestamptz '2026-11-01' FROM workspaces w, generate_series(1, $1::int) k`,
    [s.metricsPerWorkspace],
  );
  await step(
    'books',
    `CREATE TEMP TABLE scale_metrics AS SELECT row_number() OVER (ORDER BY id) AS n, id, workspace_id FROM metrics;
     CREATE INDEX ON scale_metrics (n)`,
  );
  await q(
    `INSERT INTO markets (workspace_id, metric_id, target_date, granularity, resolves_on, range_min, range_max, status, funded, liquidity, b, q_higher, q_lower,
                          resolved_value, resolved_at, created_at, trade_count, volume)
     SELECT mt.workspace_id, mt.id, 'scale-' || i, 'day', '2026-12-31', 0, 1000, CASE WHEN i <= $1::int THEN 'resolved' ELSE 'open' END, true,
            100000000000, 144269504088, (abs(hashint4(i)) % 200)::bigint * 1000000000, (abs(hashint4(i + 7)) % 200)::bigint * 1000000000,
            CASE WHEN i <= $1::int THEN (abs(hashint4(i * 3)) % 1200)::float8 END,
            CASE WHEN i <= $1::int THEN timestamptz '2026-01-01' + (i::float8 / $1::int) * interval '330 days' END,
            timestamptz '2025-12-01' + (i::float8 / ($1::int + $2::int)) * interval '330 days', 0, 0
       FROM generate_series(1, $1::int + $2::int) i
       JOIN scale_metrics mt ON mt.n = 1 + (i % (SELECT count(*) FROM scale_metrics))`,
    [s.books - s.open, s.open],
  );
  await q(`CREATE TEMP TABLE scale_books AS SELECT id, workspace_id, row_number() OVER (ORDER BY target_date) AS n FROM markets`);
  await q(`CREATE INDEX ON scale_books (n)`);
  await step(
    'trades',
    `INSERT INTO trades (market_id, workspace_id, agent_id, kind, direction, shares, cost, probability_before, probability_after, consensus_before, consensus_after, created_at)
     SELECT bb.id, bb.workspace_id, 'p' || (1 + abs(hashint4(g * 13)) % $2::int), 'buy', CASE WHEN g % 2 = 0 THEN 'higher' ELSE 'lower' END,
            (1 + abs(hashint4(g)) % 20)::bigint * 1000000000, (1 + abs(hashint4(g)) % 20)::bigint * 500000000,
            0.5, x.p, 500, x.p * 1000, timestamptz '2025-12-01' + (g::float8 / $1::int) * interval '360 days'
       FROM generate_series(1, $1::int) g
       JOIN scale_books bb ON bb.n = 1 + (g % $3::int)
       CROSS JOIN LATERAL (SELECT 0.01 + (abs(hashint4(g * 7)) % 98) / 100.0 AS p) x`,
    [s.trades, s.participants, s.books],
  );
  await step(
    'positions',
    `INSERT INTO positions (market_id, agent_id, workspace_id, shares_higher, shares_lower, net_cost, payout)
     SELECT t.market_id, t.agent_id, t.workspace_id, coalesce(sum(t.shares) FILTER (WHERE t.direction = 'higher'), 0), coalesce(sum(t.shares) FILTER (WHERE t.direction = 'lower'), 0), sum(t.cost), NULL
       FROM trades t GROUP BY t.market_id, t.agent_id, t.workspace_id`,
  );
  await q(
    `UPDATE positions p SET payout = floor(p.shares_higher * least(1, mk.resolved_value / 1000) + p.shares_lower * (1 - least(1, mk.resolved_value / 1000)))::bigint
       FROM markets mk WHERE mk.id = p.market_id AND mk.status = 'resolved'`,
  );
  await q(`UPDATE markets mk SET trade_count = c.n, volume = c.v FROM (SELECT market_id, count(*)::int AS n, sum(cost) AS v FROM trades GROUP BY market_id) c WHERE c.market_id = mk.id`);
  await q(`INSERT INTO accounts (id, kind, balance) SELECT 'pool:' || id, 'pool', 100000000000000 FROM markets WHERE status = 'open'`);
  await step(
    'proposals',
    `INSERT INTO proposals (workspace_id, title, description, proposed_by, liquidity, metric_ids, created_at)
     SELECT w.id, 'Proposal ' || k || ' of ' || w.slug, 'Seeded.', 'scale-owner', 100000000000, ARRAY(SELECT id FROM metrics WHERE workspace_id = w.id ORDER BY sort_order LIMIT 1),
            timestamptz '2026-01-01' + k * interval '1 day'
       FROM workspaces w, generate_series(1, $1::int) k`,
    [s.proposalsPerWorkspace],
  );
  // A year of decisions per workspace (proposals x metrics x recordsPerPair: 200 at the default
  // sizes): 90% realised, 5% pending, 5% voided, consensus and readings spread over the range.
  await step(
    'track record',
    `INSERT INTO track_record (workspace_id, proposal_id, metric_id, target_date, decided_market_id, decision, decided_at, range_min, range_max,
                               approved_consensus, declined_consensus, advice, last_reading, average_change, status, realised_value, settled_at,
                               market_error, persistence_error, average_change_error, direction_held, average_change_direction_held, forecast_p, outcome_v)
     SELECT x.workspace_id, x.proposal_id, x.metric_id, 'scale-' || x.k, gen_random_uuid(), x.decision, x.decided_at, 0, 1000,
            x.a, x.d, CASE WHEN x.a > x.d THEN 'approved' WHEN x.a < x.d THEN 'declined' END, x.last, 10, x.status,
            CASE WHEN x.status = 'realised' THEN x.r END, CASE WHEN x.status <> 'pending' THEN x.decided_at + interval '20 days' END,
            CASE WHEN x.status = 'realised' THEN x.r - x.f END, CASE WHEN x.status = 'realised' THEN x.r - x.last END,
            CASE WHEN x.status = 'realised' THEN x.r - x.last - 10 END,
            CASE WHEN x.status = 'realised' THEN sign(x.f - x.last) = sign(x.r - x.last) END,
            CASE WHEN x.status = 'realised' THEN x.r > x.last END,
            CASE WHEN x.status = 'realised' THEN x.f / 1000 END, CASE WHEN x.status = 'realised' THEN x.r / 1000 END
       FROM (SELECT p.workspace_id, p.id AS proposal_id, mt.id AS metric_id, k,
                    CASE WHEN h % 2 = 0 THEN 'approved' ELSE 'declined' END AS decision,
                    timestamptz '2026-01-01' + (k::float8 / $1::int) * interval '330 days' AS decided_at,
                    (h % 900 + 50)::float8 AS a, ((h / 7) % 900 + 50)::float8 AS d, ((h / 13) % 1000)::float8 AS last, ((h / 17) % 1000)::float8 AS r,
                    CASE WHEN h % 2 = 0 THEN (h % 900 + 50)::float8 ELSE ((h / 7) % 900 + 50)::float8 END AS f,
                    CASE WHEN h % 20 = 0 THEN 'pending' WHEN h % 20 = 1 THEN 'voided' ELSE 'realised' END AS status
               FROM proposals p JOIN metrics mt ON mt.workspace_id = p.workspace_id
               CROSS JOIN generate_series(1, $1::int) k
               CROSS JOIN LATERAL (SELECT abs(hashint4(k * 31 + hashint4(mt.sort_order) + p.seq::int * 7)) AS h) hh) x`,
    [s.recordsPerPair],
  );
  await step(
    'events',
    `INSERT INTO outbox (workspace_id, type, data, created_at, published_at, seq, agent_id)
     SELECT t.workspace_id, 'trade.executed', json_build_object('marketId', t.market_id, 'agentId', t.agent_id), t.created_at, t.created_at,
            row_number() OVER (ORDER BY t.seq), t.agent_id
       FROM trades t WHERE t.seq % $1::int = 0`,
    [s.tradesPerEvent],
  );
  await q(`UPDATE event_sequencer SET last_seq = (SELECT coalesce(max(seq), 0) FROM outbox)`);
  const t0 = performance.now();
  await q('VACUUM ANALYZE');
  log(`  vacuum analyze in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

/** Real ids of the seed for the catalog's paths (anything else: a well-formed id of nothing). */
export interface CatalogIds {
  agent: string;
  workspaceId: string;
  workspaceSlug: string;
  marketId: string;
  metricId: string;
  proposalId: string;
}

/**
 * The seed's ids a walk of the catalog uses: member p17, its workspace, an open book there, a
 * proposal. Not p1-p10: bench/scale makes those the holders of every book of its passes (2,000+
 * positions each), which measured one unusual participant's unpaginated lists, not the data's size.
 */
export async function catalogIds(q: (sql: string, params?: unknown[]) => Promise<unknown>): Promise<CatalogIds> {
  const one = async (sql: string, params: unknown[]) => ((await q(sql, params)) as Record<string, string>[])[0];
  const agent = 'p17';
  const ws = await one(`SELECT w.id, w.slug FROM workspaces w JOIN memberships m ON m.workspace_id = w.id WHERE m.agent_id = $1`, [agent]);
  const market = await one(`SELECT id, metric_id FROM markets WHERE workspace_id = $1 ORDER BY status = 'open' DESC LIMIT 1`, [ws.id]);
  const proposal = await one(`SELECT id FROM proposals WHERE workspace_id = $1 LIMIT 1`, [ws.id]);
  return { agent, workspaceId: ws.id, workspaceSlug: ws.slug, marketId: market.id, metricId: market.metric_id, proposalId: proposal.id };
}

/**
 * Every GET path of the catalog (`/api...`, ids filled in) and every page, for these ids. The
 * stream (/events/stream) is left out: it answers until the client goes.
 */
export function catalogCalls(routes: readonly { method: string; path: string }[], ids: CatalogIds, unknownId: () => string): string[] {
  const byArea: Record<string, string> = { agents: ids.agent, markets: ids.marketId, metrics: ids.metricId, proposals: ids.proposalId, workspaces: ids.workspaceId };
  const valueOf = (path: string, name: string) => {
    if (name === 'agentId') return ids.agent;
    if (name === 'section') return 'markets';
    const parts = path.split('/').filter(Boolean);
    const area = parts[0] === 'predictions' ? parts[1] : parts[0];
    return (name === 'id' && byArea[area]) || unknownId();
  };
  const api = routes
    .filter((r) => r.method === 'GET' && r.path !== '/events/stream')
    .map((r) => `/api${r.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(valueOf(r.path, name)))}`);
  const w = `/w/${ids.workspaceSlug}`;
  return [
    ...api,
    '/',
    '/?q=ws-1',
    w,
    `${w}/metrics/${ids.metricId}`,
    `${w}/markets/${ids.marketId}`,
    `${w}/proposals`,
    `${w}/proposals/${ids.proposalId}`,
    `${w}/track-record`,
    `${w}/metrics/new`,
    `${w}/proposals/new`,
    '/workspaces/new',
    '/transfer',
    '/leaderboard',
    `/participants/${ids.agent}`,
  ];
}
