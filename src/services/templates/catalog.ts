/**
 * Workspace templates for POST /onboard (issue 25): metrics (leaves with a starting value, computed
 * ones with formulas) and a starter proposal. Metrics open without books (timePreference null), so
 * the unclaimed grant is not spent on subsidies; the owner turns markets on per metric later.
 */
export interface TemplateMetric {
  name: string;
  description: string;
  value?: number;
  formula?: string;
  marketRangeMax?: number;
}

export interface WorkspaceTemplate {
  id: string;
  title: string;
  description: string;
  metrics: TemplateMetric[];
  starterProposal: { title: string; description: string; expects: string[] } | null;
}

export const TEMPLATES: readonly WorkspaceTemplate[] = [
  { id: 'blank', title: 'Blank', description: 'An empty workspace.', metrics: [], starterProposal: null },
  {
    id: 'startup-kpis',
    title: "A startup's KPIs",
    description: 'Revenue, customers and cash, with ARPU, churn rate and runway derived from them.',
    metrics: [
      { name: 'MRR', description: 'Monthly recurring revenue, in dollars, at month end.', value: 10000, marketRangeMax: 100000 },
      { name: 'Customers', description: 'Paying customers at month end.', value: 50, marketRangeMax: 1000 },
      { name: 'Churned Customers', description: 'Customers lost during the month.', value: 2, marketRangeMax: 100 },
      { name: 'Cash', description: 'Cash in the bank, in dollars.', value: 250000, marketRangeMax: 2000000 },
      { name: 'Monthly Burn', description: 'Net cash out per month, in dollars.', value: 30000, marketRangeMax: 200000 },
      { name: 'ARPU', description: 'Average revenue per customer per month.', formula: '{MRR} / max({Customers}, 1)', marketRangeMax: 5000 },
      { name: 'Churn Rate', description: 'Percent of customers lost in the month.', formula: '{Churned Customers} / max({Customers}, 1) * 100', marketRangeMax: 100 },
      { name: 'Runway Months', description: 'Months of cash at the current burn.', formula: '{Cash} / max({Monthly Burn}, 1)', marketRangeMax: 60 },
    ],
    starterProposal: {
      title: 'Raise prices 10% for new customers',
      description: 'New customers pay 10% more from next month; existing plans keep their price. Expected to lift MRR and ARPU, at some risk to new customer growth.',
      expects: ['MRR', 'Customers'],
    },
  },
  {
    id: 'personal-goals',
    title: 'A personal goals floor',
    description: 'Sleep, exercise, reading and savings, with a wellbeing score computed from them.',
    metrics: [
      { name: 'Sleep Hours', description: 'Average hours of sleep per night this week.', value: 7, marketRangeMax: 12 },
      { name: 'Workouts', description: 'Workouts this week.', value: 2, marketRangeMax: 14 },
      { name: 'Books Read', description: 'Books finished this year.', value: 0, marketRangeMax: 100 },
      { name: 'Savings', description: 'Savings balance, in your currency.', value: 1000, marketRangeMax: 100000 },
      {
        name: 'Wellbeing Score',
        description: 'Sleep (up to 40 points at 8 hours) plus workouts (10 points each, up to 40) plus reading (2 points a book, up to 20).',
        formula: 'min({Sleep Hours} / 8, 1) * 40 + min({Workouts}, 4) * 10 + min({Books Read}, 10) * 2',
        marketRangeMax: 100,
      },
    ],
    starterProposal: {
      title: 'Lights out by 22:30 on weeknights',
      description: 'No screens after 22:00 and lights out by 22:30, Monday to Thursday, for a month.',
      expects: ['Sleep Hours'],
    },
  },
  {
    id: 'open-source-health',
    title: "An open-source project's health",
    description: 'Stars, contributors and the issue queue, with a close rate and a health score.',
    metrics: [
      { name: 'Stars', description: 'GitHub stars.', value: 100, marketRangeMax: 100000 },
      { name: 'Monthly Contributors', description: 'People with a merged pull request this month.', value: 3, marketRangeMax: 500 },
      { name: 'Open Issues', description: 'Open issues at month end.', value: 40, marketRangeMax: 5000 },
      { name: 'Issues Closed', description: 'Issues closed this month.', value: 10, marketRangeMax: 2000 },
      { name: 'Review Hours', description: 'Median hours from a pull request to its first review.', value: 48, marketRangeMax: 720 },
      { name: 'Issue Close Rate', description: 'Percent of this month’s issue load that was closed.', formula: '{Issues Closed} / max({Open Issues} + {Issues Closed}, 1) * 100', marketRangeMax: 100 },
      {
        name: 'Health Score',
        description: 'Close rate (up to 50 points), contributors (5 points each, up to 30) and review speed (20 points at under a day, less as it grows).',
        formula: '{Issue Close Rate} / 2 + min({Monthly Contributors}, 6) * 5 + 20 * min(24 / max({Review Hours}, 1), 1)',
        marketRangeMax: 100,
      },
    ],
    starterProposal: {
      title: 'Add a CONTRIBUTING guide and label good first issues',
      description: 'Write CONTRIBUTING.md, label ten good-first-issues and answer new pull requests within a day for a month.',
      expects: ['Monthly Contributors', 'Review Hours'],
    },
  },
];

export const TEMPLATE_IDS = TEMPLATES.map((t) => t.id);

export function templateById(id: string): WorkspaceTemplate | undefined {
  return TEMPLATES.find((t) => t.id === id);
}
