/**
 * The wire protocol of Market1 (`SERVICE_01`, D10.1) as the connector and the sandbox speak it: paths, the JSON
 * shapes of requests and answers, batching limits, the published rate limits, and the mapping of the
 * marketplace's campaign kinds, status codes and payment types to our enumerations (spec §2 Campaign, §3
 * campaign status).
 *
 * Source: the marketplace's published OpenAPI documents of December 2025 in `../shared/reference/market1/`
 * (`08-promotion.yaml` promotion, `02-products.yaml` content, `10-tariffs.yaml` tariffs); no operation marked
 * `deprecated: true` is used. docs/market1.md names, per operation, what we follow and what we do differently.
 * Field names are the marketplace's, not ours. Money on the wire is in roubles (balances and deposits whole
 * roubles, statistics with up to 2 decimals), bids in kopecks. Timestamps carry an offset (`+03:00`, Moscow);
 * statistics days are the marketplace's calendar days (Moscow, UTC+3 all year).
 *
 * Allowed values of characteristics come from the content API's published directories, linked to a
 * characteristic by its name as the document names it (`CHARACTERISTIC_DIRECTORIES`, P178).
 */

/** Paths the connector calls (and the sandbox's budget deposit), relative to the account's base URL. */
export const MARKET1_PATHS = {
  /** `GET`: campaign ids grouped by type and status (`08-promotion.yaml` "Списки кампаний"). */
  campaignCount: '/adv/v1/promotion/count',
  /** `GET ?ids=1,2` (≤ 50): campaign details (`GetAdverts`). */
  campaignDetails: '/api/advert/v2/adverts',
  /** `GET ?ids=&beginDate=&endDate=` (≤ 50 ids, ≤ 31 days): daily statistics (`ResponseFullStats`). */
  fullStatistics: '/adv/v3/fullstats',
  /** `GET`: `{balance, net, bonus, cashbacks}` in whole roubles. */
  balance: '/adv/v1/balance',
  /** `GET ?id=`: start a campaign in status 4 or 11. */
  start: '/adv/v0/start',
  /** `GET ?id=`: pause a campaign in status 9. */
  pause: '/adv/v0/pause',
  /** `GET ?id=`: finish a campaign in status 4, 9 or 11. */
  stop: '/adv/v0/stop',
  /** `POST {name, nms, bid_type, payment_type, placement_types}`: create a campaign; answers its id. */
  create: '/adv/v2/seacat/save-ad',
  /** `POST ?id=` with `{sum, type}`: top up a campaign in status 11; served by the sandbox, not called (P177). */
  budgetDeposit: '/adv/v1/budget/deposit',
  /** `GET ?name&limit&offset&parentID`: subjects (the marketplace's categories). */
  subjects: '/content/v2/object/all',
  /** `GET`: parent categories of the subjects. */
  parentCategories: '/content/v2/object/parent/all',
  /** `GET /content/v2/object/charcs/{subjectId}?locale`: characteristics (parameters) of a subject. */
  characteristics: '/content/v2/object/charcs',
  /** `GET ?locale`: commission percentages of every subject. */
  commissions: '/api/v1/tariffs/commission',
} as const;

/** The content API's directories of characteristic values we read (`GET ?locale`, `02-products.yaml`). */
export const MARKET1_DIRECTORY_PATHS = {
  colors: '/content/v2/directory/colors',
  kinds: '/content/v2/directory/kinds',
  countries: '/content/v2/directory/countries',
  seasons: '/content/v2/directory/seasons',
  vat: '/content/v2/directory/vat',
} as const;

/** A directory of characteristic values. */
export type DirectoryName = keyof typeof MARKET1_DIRECTORY_PATHS;

/**
 * The characteristics whose values a directory publishes, by name (P178): the characteristics operation's
 * description sends "Цвет", "Пол", "Страна производства", "Сезон" and "Ставка НДС" to their directories
 * (names in Russian, so the connector asks for `locale=ru`). "ТНВЭД-код" has a per-subject list of codes, not
 * values to choose from, and stays free input like every other characteristic.
 */
export const CHARACTERISTIC_DIRECTORIES: Readonly<Record<string, DirectoryName>> = {
  Цвет: 'colors',
  Пол: 'kinds',
  'Страна производства': 'countries',
  Сезон: 'seasons',
  'Ставка НДС': 'vat',
};

/** The directory of a characteristic's name (case and outer spaces ignored), or undefined. */
export function directoryOf(characteristicName: string): DirectoryName | undefined {
  const wanted = characteristicName.trim().toLowerCase();
  return Object.entries(CHARACTERISTIC_DIRECTORIES).find(([name]) => name.toLowerCase() === wanted)?.[1];
}

/** The language the connector asks the content API for (`locale`): the directories' names are Russian. */
export const CONTENT_LOCALE = 'ru';

/** Batching limits of the marketplace (requests beyond them are answered 400). */
export const MARKET1_LIMITS = {
  /** Campaign ids per details request. */
  campaignIdsPerDetailsRequest: 50,
  /** Campaign ids per statistics request. */
  campaignsPerStatisticsRequest: 50,
  /** Days (inclusive) of one statistics request. */
  daysPerStatisticsInterval: 31,
  /** Products of a new campaign. */
  productsPerCampaign: 50,
  /** Subjects per search request. */
  subjectsPerRequest: 1000,
  /** Longest campaign name (our limit: the document publishes none). */
  campaignNameLength: 128,
} as const;

/** Rate-limit groups: the operations whose published limit the sandbox counts together, per API key. */
export type RateLimitGroup =
  | 'campaignCount'
  | 'campaignDetails'
  | 'statistics'
  | 'balance'
  | 'start'
  | 'pause'
  | 'stop'
  | 'create'
  | 'budgetDeposit'
  | 'content'
  | 'tariffs';

/**
 * A published limit as the documents give it (each operation's "Лимит запросов" table): a token bucket of
 * `burst` tokens, one token regained every `intervalMs`; `limit` requests per `periodMs` on average.
 */
export interface RateLimit {
  periodMs: number;
  limit: number;
  intervalMs: number;
  burst: number;
}

const bucket = (periodMs: number, limit: number, intervalMs: number, burst: number): RateLimit => ({
  periodMs,
  limit,
  intervalMs,
  burst,
});

/** The published limits per seller account (API key) and operation; the sandbox enforces them. */
export const MARKET1_RATE_LIMITS: Record<RateLimitGroup, RateLimit> = {
  campaignCount: bucket(1000, 5, 200, 5),
  campaignDetails: bucket(1000, 5, 200, 5),
  statistics: bucket(60_000, 3, 20_000, 1),
  balance: bucket(1000, 1, 1000, 5),
  start: bucket(1000, 5, 200, 5),
  pause: bucket(1000, 5, 200, 5),
  stop: bucket(1000, 5, 200, 5),
  create: bucket(60_000, 5, 12_000, 5),
  budgetDeposit: bucket(1000, 1, 1000, 5),
  content: bucket(60_000, 100, 600, 5),
  tariffs: bucket(60_000, 1, 60_000, 2),
};

/** Campaign types (spec §2 `Campaign.type`). */
export const CAMPAIGN_TYPES = [
  'IN_CATALOG',
  'IN_CARD',
  'IN_SEARCH',
  'IN_MAIN',
  'AUTO',
  'IN_SEARCH_AND_CATALOG',
  'BRAND_SHELF',
  'UNKNOWN',
] as const;
/** A campaign type in our vocabulary. */
export type CampaignType = (typeof CAMPAIGN_TYPES)[number];

/** The types the marketplace still creates (P98): `AUTO` = unified bid, `IN_SEARCH_AND_CATALOG` = manual bid. */
export const CREATABLE_CAMPAIGN_TYPES = ['AUTO', 'IN_SEARCH_AND_CATALOG'] as const;

/** Campaign statuses (spec §3 campaign status). */
export const CAMPAIGN_STATUSES = [
  'DELETED',
  'READY',
  'FINISHED',
  'CANCELLED',
  'ACTIVE',
  'PAUSED',
  'UNKNOWN',
  'ARCHIVED',
] as const;
/** A campaign status in our vocabulary. */
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/** Where a campaign's budget is written off from (spec §2 `Campaign.writeOffType`). */
export type WriteOffType = 'BALANCE' | 'NET' | 'BONUS';

/** Payment types the document lists (`cpm` per thousand views, `cpc` per click), upper-cased; else `UNKNOWN`. */
export type PaymentType = 'CPM' | 'CPC' | 'UNKNOWN';

/** The campaign type code of today's campaigns (unified or manual bid; `bid_type` tells them apart). */
export const CURRENT_TYPE_CODE = 9;

/**
 * Our type of a campaign from its `bid_type` (P91): `unified` → `AUTO` (one bid for search and recommendations:
 * today's automatic campaign; the count list's outdated type 8 is one too), `manual` → `IN_SEARCH_AND_CATALOG`
 * (bids per placement in search and recommendations); another value → `UNKNOWN`. The count list's type code
 * alone cannot tell the two kinds of type 9 apart, so only details carry a type.
 */
export function campaignTypeOf(bidType: string | undefined): CampaignType {
  return bidType === 'unified' ? 'AUTO' : bidType === 'manual' ? 'IN_SEARCH_AND_CATALOG' : 'UNKNOWN';
}

/**
 * Statuses the document lists → ours (P91): -1 being deleted, 4 ready to start, 7 finished, 8 cancelled,
 * 9 active, 11 paused. Any other code → `UNKNOWN` (our `ARCHIVED` has no code in the document).
 */
const STATUS_BY_CODE: ReadonlyMap<number, CampaignStatus> = new Map([
  [-1, 'DELETED'],
  [4, 'READY'],
  [7, 'FINISHED'],
  [8, 'CANCELLED'],
  [9, 'ACTIVE'],
  [11, 'PAUSED'],
]);

/** The status codes the document lists. */
export const DOCUMENTED_STATUS_CODES: readonly number[] = [...STATUS_BY_CODE.keys()];

/** The status of a new campaign: 4, ready to start (`POST /adv/v2/seacat/save-ad`, P177). */
export const READY_STATUS_CODE = 4;

/** Status codes that have statistics (`GET /adv/v3/fullstats`: "for campaigns in statuses 7, 9 and 11"). */
export const STATUS_CODES_WITH_STATISTICS: readonly number[] = [7, 9, 11];

/** Budget source codes of `POST /adv/v1/budget/deposit` (`type`): 0 account, 1 balance, 3 bonuses. */
const WRITE_OFF_CODES: Record<WriteOffType, number> = { BALANCE: 0, NET: 1, BONUS: 3 };

/** Our status of a marketplace status code; `UNKNOWN` for codes the document does not list. */
export function campaignStatusOf(code: number): CampaignStatus {
  return STATUS_BY_CODE.get(code) ?? 'UNKNOWN';
}

/** Our payment type of the wire's `payment_type`. */
export function paymentTypeOf(wire: string | undefined): PaymentType {
  return wire === 'cpm' ? 'CPM' : wire === 'cpc' ? 'CPC' : 'UNKNOWN';
}

/** The write-off source of a budget source code, or undefined for an unknown code. */
export function writeOffTypeOf(code: number): WriteOffType | undefined {
  return (Object.keys(WRITE_OFF_CODES) as WriteOffType[]).find((type) => WRITE_OFF_CODES[type] === code);
}

/** The marketplace's offset: Moscow time, UTC+3 all year. */
export const MARKETPLACE_OFFSET_MS = 3 * 3_600_000;

/** `time` (ms) as the marketplace writes timestamps: ISO 8601 with `+03:00`. */
export function marketplaceTimestamp(time: number): string {
  return new Date(time + MARKETPLACE_OFFSET_MS).toISOString().replace('Z', '+03:00');
}

/** The marketplace's calendar day (Moscow) of `time` (ms), `YYYY-MM-DD`. */
export function marketplaceDay(time: number): string {
  return new Date(time + MARKETPLACE_OFFSET_MS).toISOString().slice(0, 10);
}

/** A `deleted` timestamp in this year or later means "not deleted" (the marketplace writes 2100-01-01). */
export const NOT_DELETED_FROM_YEAR = 2100;

// ---- Wire shapes -------------------------------------------------------------------------------------------

/** `GET /adv/v1/promotion/count`. */
export interface WireCampaignCount {
  adverts: { type: number; status: number; count: number; advert_list: WireCampaignRef[] }[] | null;
  all: number;
}

/** One entry of the count answer; `changeTime` with its offset. */
export interface WireCampaignRef {
  advertId: number;
  changeTime: string;
}

/** A campaign of `GET /api/advert/v2/adverts` (`GetAdverts.adverts[]`). */
export interface WireCampaign {
  id: number;
  /** `unified` or `manual`. */
  bid_type: string;
  status: number;
  settings: {
    name: string;
    /** `cpm` or `cpc`. */
    payment_type: string;
    placements: { search: boolean; recommendations: boolean };
  };
  nm_settings: {
    nm_id: number;
    subject: { id: number; name: string };
    /** Bids in kopecks. */
    bids_kopecks: { search: number; recommendations: number };
  }[];
  /** With offsets; `deleted` in 2100 = not deleted; `started` null = never started. */
  timestamps: { created: string; updated: string; started: string | null; deleted: string };
}

/** `GET /api/advert/v2/adverts`. */
export interface WireCampaignDetails {
  adverts: WireCampaign[];
}

/** Counters shared by every level of the statistics answer. Money in roubles. */
export interface WireCounters {
  views: number;
  clicks: number;
  /** clicks / views × 100. */
  ctr: number;
  /** sum / clicks, roubles. */
  cpc: number;
  /** Expenses, roubles. */
  sum: number;
  /** Additions to cart. */
  atbs: number;
  orders: number;
  /** orders / clicks × 100. */
  cr: number;
  /** Ordered items. */
  shks: number;
  /** Orders amount, roubles. */
  sum_price: number;
  /** Cancelled items. */
  canceled: number;
}

/** Statistics of one product on one platform and day. */
export interface WireProductCounters extends WireCounters {
  nmId: number;
  name: string;
}

/** One platform (`appType` 1 site, 32 Android, 64 iOS) of one day. */
export interface WirePlatformCounters extends WireCounters {
  appType: number;
  nms: WireProductCounters[];
}

/** One day of one campaign. */
export interface WireDayCounters extends WireCounters {
  /** The marketplace's calendar day written as midnight UTC, e.g. `2025-09-07T00:00:00Z`. */
  date: string;
  apps: WirePlatformCounters[];
}

/** One campaign of a `GET /adv/v3/fullstats` answer (`FullStatsItem`). */
export interface WireCampaignStatistics extends WireCounters {
  advertId: number;
  days: WireDayCounters[];
  /** Average positions (unified bid campaigns); `date` `YYYY-MM-DD`. */
  boosterStats?: { date: string; nm: number; avg_position: number }[];
}

/** `GET /adv/v1/balance`, whole roubles: `balance` the account, `net` the balance, `bonus` bonuses. */
export interface WireBalance {
  balance: number;
  net: number;
  bonus: number;
  cashbacks?: { sum: number; percent: number; expiration_date: string }[];
}

/** `POST /adv/v2/seacat/save-ad` body. */
export interface WireCreateCampaign {
  name: string;
  nms: number[];
  bid_type: 'manual' | 'unified';
  payment_type: 'cpm' | 'cpc';
  /** Only for manual bids. */
  placement_types?: ('search' | 'recommendations')[];
}

/** `POST /adv/v1/budget/deposit?id=` body (campaigns in status 11 only): whole roubles from the source `type`. */
export interface WireBudgetDeposit {
  sum: number;
  type: number;
  return: boolean;
}

/** The envelope of content API answers. */
export interface WireContentEnvelope<T> {
  data: T;
  error: boolean;
  errorText: string;
  additionalErrors: string | null;
}

/** A subject of `GET /content/v2/object/all`. */
export interface WireSubject {
  subjectID: number;
  parentID: number;
  subjectName: string;
  parentName: string;
}

/** A parent category of `GET /content/v2/object/parent/all`. */
export interface WireParentCategory {
  id: number;
  name: string;
  isVisible: boolean;
}

/**
 * A characteristic of `GET /content/v2/object/charcs/{subjectId}`. `charcType` 0 or 1: string(s), 4: number(s);
 * `maxCount` 0 = unlimited values.
 */
export interface WireCharacteristic {
  charcID: number;
  subjectName: string;
  subjectID: number;
  name: string;
  required: boolean;
  unitName: string;
  maxCount: number;
  popular: boolean;
  charcType: number;
}

/**
 * An entry of a directory: colors `{name, parentName}`, countries `{name, fullName}`, kinds, seasons and VAT
 * rates a plain string. Entries have no id: the value is the name.
 */
export type WireDirectoryEntry = string | { name: string; parentName?: string; fullName?: string };

/** `GET /api/v1/tariffs/commission` (`Commission`): commission percentages per subject and sales model. */
export interface WireCommissionReport {
  report: {
    /** Sale through the marketplace's warehouse. */
    paidStorageKgvp: number;
    /** From the seller's warehouse, delivered by the marketplace. */
    kgvpMarketplace: number;
    /** Delivered by the seller. */
    kgvpSupplier: number;
    /** Express delivery by the seller. */
    kgvpSupplierExpress: number;
    /** Pick-up by the buyer at the seller's point. */
    kgvpPickup: number;
    /** Booking. */
    kgvpBooking: number;
    parentID: number;
    parentName: string;
    subjectID: number;
    subjectName: string;
  }[];
}
