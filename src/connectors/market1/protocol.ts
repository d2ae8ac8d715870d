/**
 * The wire protocol of Market1 (`SERVICE_01`, D10.1) as the connector and the sandbox speak it: paths, the JSON
 * shapes of requests and answers, batching limits, the marketplace's published rate limits, and the mapping of its
 * numeric type, status and write-off codes to our enumerations (spec §2 Campaign, §3 campaign status).
 *
 * Modelled on the marketplace's public promotion, content and tariff APIs (2024 versions, the same generation
 * as the reference OpenAPI): field names are the marketplace's, not ours. Money on the wire is in roubles
 * (numbers with up to 2 decimals; balances and budgets whole roubles). Two documented sandbox extensions fill
 * what the public API does not publish: `hasDirectory` on a characteristic and the options path
 * `GET /content/v2/directory/values` (docs/market1.md, P94).
 */

/** Paths the connector calls, relative to the account's base URL. */
export const MARKET1_PATHS = {
  /** `GET`: campaign ids grouped by type and status. */
  campaignCount: '/adv/v1/promotion/count',
  /** `POST` with a JSON array of ≤ 50 campaign ids: campaign details. */
  campaignDetails: '/adv/v1/promotion/adverts',
  /** `POST` with `[{id, interval: {begin, end}}]` (≤ 100 items, ≤ 31 days each): daily statistics. */
  fullStatistics: '/adv/v2/fullstats',
  /** `GET`: `{balance, net, bonus}` in whole roubles. */
  balance: '/adv/v1/balance',
  /** `GET ?id=`: start a campaign in status 4 or 11. */
  start: '/adv/v0/start',
  /** `GET ?id=`: pause a campaign in status 9. */
  pause: '/adv/v0/pause',
  /** `GET ?id=`: finish a campaign in status 4, 9 or 11. */
  stop: '/adv/v0/stop',
  /** `POST`: create an automatic campaign (type 8). */
  createAuto: '/adv/v1/save-ad',
  /** `POST`: create an auction campaign (type 9, search and catalog). */
  createAuction: '/adv/v2/seacat/save-ad',
  /** `GET ?name&limit&offset&parentID`: subjects (the marketplace's categories). */
  subjects: '/content/v2/object/all',
  /** `GET`: parent categories of the subjects. */
  parentCategories: '/content/v2/object/parent/all',
  /** `GET /content/v2/object/charcs/{subjectId}`: characteristics (parameters) of a subject. */
  characteristics: '/content/v2/object/charcs',
  /** `GET ?charcID&name&limit&offset`: allowed values of a directory characteristic (sandbox extension). */
  characteristicValues: '/content/v2/directory/values',
  /** `GET ?locale`: commission percentages of every subject. */
  commissions: '/api/v1/tariffs/commission',
} as const;

/** Batching limits of the marketplace (requests beyond them are answered 400). */
export const MARKET1_LIMITS = {
  /** Campaign ids per details request. */
  campaignIdsPerDetailsRequest: 50,
  /** Campaigns per statistics request. */
  campaignsPerStatisticsRequest: 100,
  /** Days (inclusive) of one statistics interval. */
  daysPerStatisticsInterval: 31,
  /** Products of a new automatic campaign. */
  productsPerAutoCampaign: 100,
  /** Products of a new auction campaign. */
  productsPerAuctionCampaign: 50,
  /** Subjects per search request. */
  subjectsPerRequest: 1000,
  /** Longest campaign name. */
  campaignNameLength: 128,
} as const;

/** Rate-limit groups: each is counted per API key (P93). */
export type RateLimitGroup =
  'campaigns' | 'statistics' | 'balance' | 'status' | 'createAuto' | 'createAuction' | 'content' | 'tariffs';

/** A published limit: at most `max` requests per `windowMs` for one API key. */
export interface RateLimit {
  max: number;
  windowMs: number;
}

/** The marketplace's published limits per API key and method group (the sandbox enforces them). */
export const MARKET1_RATE_LIMITS: Record<RateLimitGroup, RateLimit> = {
  campaigns: { max: 5, windowMs: 1000 },
  statistics: { max: 1, windowMs: 60_000 },
  balance: { max: 1, windowMs: 1000 },
  status: { max: 5, windowMs: 1000 },
  createAuto: { max: 1, windowMs: 20_000 },
  createAuction: { max: 5, windowMs: 60_000 },
  content: { max: 100, windowMs: 60_000 },
  tariffs: { max: 1, windowMs: 60_000 },
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

/**
 * Marketplace type codes → ours (P91). 4–7 are the marketplace's legacy types, 8 automatic, 9 auction (search
 * and catalog); 10 (brand shelf) is not in the public promotion docs, the sandbox uses it so every type exists.
 */
const TYPE_BY_CODE: ReadonlyMap<number, CampaignType> = new Map([
  [4, 'IN_CATALOG'],
  [5, 'IN_CARD'],
  [6, 'IN_SEARCH'],
  [7, 'IN_MAIN'],
  [8, 'AUTO'],
  [9, 'IN_SEARCH_AND_CATALOG'],
  [10, 'BRAND_SHELF'],
]);

/**
 * Marketplace status codes → ours (P91): -1 being deleted, 4 ready to start, 7 finished, 8 refused (cancelled),
 * 9 showing (active), 11 paused; 12 (archived) is not in the public docs, the sandbox uses it.
 */
const STATUS_BY_CODE: ReadonlyMap<number, CampaignStatus> = new Map([
  [-1, 'DELETED'],
  [4, 'READY'],
  [7, 'FINISHED'],
  [8, 'CANCELLED'],
  [9, 'ACTIVE'],
  [11, 'PAUSED'],
  [12, 'ARCHIVED'],
]);

/** Write-off source codes (`btype` of an automatic campaign): 0 account, 1 balance, 3 bonuses. */
const WRITE_OFF_CODES: Record<WriteOffType, number> = { BALANCE: 0, NET: 1, BONUS: 3 };

/** Our type of a marketplace type code; `UNKNOWN` for codes we do not know. */
export function campaignTypeOf(code: number): CampaignType {
  return TYPE_BY_CODE.get(code) ?? 'UNKNOWN';
}

/** Our status of a marketplace status code; `UNKNOWN` for codes we do not know. */
export function campaignStatusOf(code: number): CampaignStatus {
  return STATUS_BY_CODE.get(code) ?? 'UNKNOWN';
}

/** The marketplace code of a type, or undefined for `UNKNOWN`. */
export function campaignTypeCode(type: CampaignType): number | undefined {
  for (const [code, value] of TYPE_BY_CODE) if (value === type) return code;
  return undefined;
}

/** The marketplace code of a status, or undefined for `UNKNOWN`. */
export function campaignStatusCode(status: CampaignStatus): number | undefined {
  for (const [code, value] of STATUS_BY_CODE) if (value === status) return code;
  return undefined;
}

/** The `btype` code of a write-off source. */
export function writeOffCode(type: WriteOffType): number {
  return WRITE_OFF_CODES[type];
}

/** The write-off source of a `btype` code, or undefined for an unknown code. */
export function writeOffTypeOf(code: number): WriteOffType | undefined {
  return (Object.keys(WRITE_OFF_CODES) as WriteOffType[]).find((type) => WRITE_OFF_CODES[type] === code);
}

/** The end time the marketplace gives a campaign that has no end ("until 2100"). */
export const NO_END_TIME = '2100-01-01T00:00:00+03:00';

// ---- Wire shapes -------------------------------------------------------------------------------------------

/** `GET /adv/v1/promotion/count`. */
export interface WireCampaignCount {
  adverts: { type: number; status: number; count: number; advert_list: WireCampaignRef[] }[] | null;
  all: number;
}

/** One entry of the count answer. */
export interface WireCampaignRef {
  advertId: number;
  changeTime: string;
}

/** Common fields of every campaign in `POST /adv/v1/promotion/adverts`. */
interface WireCampaignBase {
  advertId: number;
  name: string;
  type: number;
  status: number;
  /** Daily budget in whole roubles; 0 = none (legacy types only). */
  dailyBudget: number;
  createTime: string;
  changeTime: string;
  /** Last start; absent for a campaign never started. */
  startTime?: string;
  endTime: string;
  /** `cpm` (per thousand views) or `cpo` (per order). */
  paymentType: string;
}

/** A legacy campaign (types 4–7, and 10): subject groups with their products. */
export interface WireLegacyCampaign extends WireCampaignBase {
  params: {
    subjectId?: number;
    subjectName?: string;
    menuId?: number;
    menuName?: string;
    setId?: number;
    setName?: string;
    /** Bid in roubles. */
    price: number;
    active: boolean;
    nms: { nm: number; active: boolean }[];
  }[];
}

/** An automatic campaign (type 8). */
export interface WireAutoCampaign extends WireCampaignBase {
  autoParams: {
    subject: { id: number; name: string };
    active: { carousel: boolean; recom: boolean; booster: boolean };
    nmCPM: { nm: number; cpm: number }[];
    nms: number[];
    cpm: number;
  };
}

/** An auction campaign (type 9). */
export interface WireAuctionCampaign extends WireCampaignBase {
  searchPluseState: boolean;
  unitedParams: {
    subject: { id: number; name: string };
    menus: { id: number; name: string }[];
    nms: number[];
    searchCPM: number;
    catalogCPM: number;
  }[];
}

/** Any campaign of the details answer. */
export type WireCampaign = WireLegacyCampaign | WireAutoCampaign | WireAuctionCampaign;

/** One item of a `POST /adv/v2/fullstats` request. */
export interface WireStatisticsRequestItem {
  id: number;
  /** Calendar days `YYYY-MM-DD`, inclusive. */
  interval: { begin: string; end: string };
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
}

/** Statistics of one product on one platform and day. */
export interface WireProductCounters extends WireCounters {
  nmId: number;
  name: string;
}

/** One platform (`appType` 1 site, 32 Android, 64 iOS) of one day. */
export interface WirePlatformCounters extends WireCounters {
  appType: number;
  nm: WireProductCounters[];
}

/** One day of one campaign. */
export interface WireDayCounters extends WireCounters {
  /** The day at midnight, e.g. `2024-05-01T00:00:00Z`. */
  date: string;
  apps: WirePlatformCounters[];
}

/** One campaign of a `POST /adv/v2/fullstats` answer. */
export interface WireCampaignStatistics extends WireCounters {
  advertId: number;
  interval: { begin: string; end: string };
  days: WireDayCounters[];
  boosterStats: { date: string; nm: number; avg_position: number }[];
}

/** `GET /adv/v1/balance`, whole roubles: `balance` the account, `net` the balance, `bonus` bonuses. */
export interface WireBalance {
  balance: number;
  net: number;
  bonus: number;
}

/** `POST /adv/v1/save-ad` body. */
export interface WireCreateAutoCampaign {
  type: 8;
  name: string;
  subjectId: number;
  /** Budget top-up in whole roubles. */
  sum: number;
  /** Write-off source code (`writeOffCode`). */
  btype: number;
  on_pause: boolean;
  nms: number[];
  /** Bid in roubles per thousand views; below the minimum the marketplace uses the minimum. */
  cpm?: number;
}

/** `POST /adv/v2/seacat/save-ad` body. */
export interface WireCreateAuctionCampaign {
  campaignName: string;
  nms: number[];
}

/** The envelope of content API answers. */
export interface WireContentEnvelope<T> {
  data: T;
  error: boolean;
  errorText: string;
  additionalErrors: unknown;
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
 * `maxCount` 0 = unlimited values; `hasDirectory` (sandbox extension) = values come from the directory.
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
  hasDirectory?: boolean;
}

/** A value of `GET /content/v2/directory/values` (sandbox extension). */
export interface WireCharacteristicValue {
  id: number;
  name: string;
}

/** `GET /api/v1/tariffs/commission`: commission percentages per subject and sales model. */
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
