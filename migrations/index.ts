import { Foundation1763700000000 } from './1763700000000-Foundation';
import { Access1763700002000 } from './1763700002000-Access';
import { Metrics1763700001000 } from './1763700001000-Metrics';
import { Markets1763700003000 } from './1763700003000-Markets';
import { Proposals1763700004000 } from './1763700004000-Proposals';
import { TradeJournal1763700005000 } from './1763700005000-TradeJournal';
import { TradeOutcomeByCode1763700006000 } from './1763700006000-TradeOutcomeByCode';
import { EventsAndHooks1763800200000 } from './1763800200000-EventsAndHooks';
import { Credits1763800100000 } from './1763800100000-Credits';
import { LimitOrders1763800300000 } from './1763800300000-LimitOrders';
import { ChainJobSweep1763800150000 } from './1763800150000-ChainJobSweep';
import { CallerCacheNotify1763801700000 } from './1763801700000-CallerCacheNotify';
import { AppendOnlyIndexes1763801800000 } from './1763801800000-AppendOnlyIndexes';
import { Standings1763802300000 } from './1763802300000-Standings';
import { MarketFunders1763900000000 } from './1763900000000-MarketFunders';
import { Accounts1763901000000 } from './1763901000000-Accounts';
import { Connections1763901100000 } from './1763901100000-Connections';
import { OAuthServer1763901200000 } from './1763901200000-OAuthServer';
import { StandingsPending1763901300000 } from './1763901300000-StandingsPending';
import { DataRoom1764109100000 } from './1764109100000-DataRoom';
import { Feedback1764109200000 } from './1764109200000-Feedback';
import { Telemetry1764109300000 } from './1764109300000-Telemetry';
import { ManualMarkets1764109400000 } from './1764109400000-ManualMarkets';
import { Sources1764109500000 } from './1764109500000-Sources';
import { Deletions1764109600000 } from './1764109600000-Deletions';
import { JsonPayloads1764109700000 } from './1764109700000-JsonPayloads';

/** Explicit list (no glob): the same code loads under tsx and jest. In timestamp order (TypeORM runs them so; a test compares). */
export const migrations = [Foundation1763700000000, Metrics1763700001000, Access1763700002000, Markets1763700003000, Proposals1763700004000, TradeJournal1763700005000, TradeOutcomeByCode1763700006000, Credits1763800100000, ChainJobSweep1763800150000, EventsAndHooks1763800200000, LimitOrders1763800300000, CallerCacheNotify1763801700000, AppendOnlyIndexes1763801800000, Standings1763802300000, MarketFunders1763900000000, Accounts1763901000000, Connections1763901100000, OAuthServer1763901200000, StandingsPending1763901300000, DataRoom1764109100000, Feedback1764109200000, Telemetry1764109300000, ManualMarkets1764109400000, Sources1764109500000, Deletions1764109600000, JsonPayloads1764109700000];
