import type { Row } from '../../db/rows';
import type { Workspace } from '../../entities/workspace';

/** A workspace as the API shows it (what presenters read): its entity's columns (db/rows); credits in nano-units. */
export type WorkspaceRow = Omit<Row<Workspace>, 'deletingAt'>;
