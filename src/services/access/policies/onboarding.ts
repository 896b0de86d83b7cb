import { rules } from './rule';

/** Onboarding: open; claiming an onboarded workspace needs a browser session. */

/** POST /onboard */
export const onboard = rules.none();
/** GET /onboard/claim/:token */
export const readClaim = rules.none();
/** POST /onboard/claim */
export const claim = rules.session();
/** POST /waitlist */
export const waitlist = rules.none();
/** GET /onboard/templates */
export const readTemplates = rules.none();
