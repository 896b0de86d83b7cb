// Each area registers its routes on import; GET /help is generated from the same registry.
import './help';
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
import './onboarding';
import './lifecycle';
import './proposals';
