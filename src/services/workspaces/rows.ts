/** A workspace as the API shows it (what presenters read): a plain row, not the TypeORM entity. */
export interface WorkspaceRow {
  id: string;
  slug: string;
  name: string;
  description: string;
  public: boolean;
  ownerId: string;
  externalProposals: boolean;
  /** Nano credits. */
  defaultLiquidity: bigint;
  /** Nano credits. */
  defaultProposalLiquidity: bigint;
  createdAt: Date;
}
