import { rules } from './rule';

/** The catalog, guides, status and health: open to all, status reads the workspace. */

/** GET /help */
export const readHelp = rules.none();
/** GET /public-config */
export const readPublicConfig = rules.none();
/** GET /guides */
export const readGuides = rules.none();
/** GET /guides/_categories */
export const readGuidesCategories = rules.none();
/** GET /guides/:section */
export const readGuide = rules.none();
/** GET /openapi.json */
export const readOpenApi = rules.none();
/** GET /status */
export const readStatus = rules.publicRead();
/** GET /health */
export const readHealth = rules.none();
