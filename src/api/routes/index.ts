// Each area registers its routes on import; GET /help is generated from the same registry.
import './help';
// credits before agents: its static /agents/... paths must win over /agents/:id.
import './credits';
import './agents';
import './workspaces';
import './orders';
import './markets';
import './portfolio';
import './metrics';
import './status';
import './groups';
import './keys';
import './participants';
import './standings';
import './onboarding';
import './accounts';
import './connections';
import './lifecycle';
import './proposals';
import './events';
import './hooks';
import './dataRoom';
import './feedback';
import './telemetry';
import './sources';
import './deletions';
import './trackRecord';
