/**
 * The Market1 connector (`SERVICE_01`, D10.1): what the campaign group and the catalog dictionary refresh (D11.3)
 * read from and do on the marketplace, in our vocabulary. One `Market1Connector` is bound to one organization's
 * API key and base URL (`Market1Client.forAccount`); its HTTP implementation is `client.ts`, the marketplace's
 * wire protocol `protocol.ts`, its errors `errors.ts` (P92).
 *
 * Units: money in roubles — `expenses`, `ordersAmount` and bids with up to 2 decimals, balances and budgets whole
 * roubles; percentages 0–100; timestamps ISO 8601 in UTC (`…Z`, converted from the marketplace's `+03:00`);
 * statistics days `YYYY-MM-DD` as the marketplace's calendar days (Moscow). Ids of campaigns (`externalId`), products (`externalProductId`, the marketplace's nm id),
 * subjects, parameters and options are the marketplace's.
 */
import type { DictionaryFile, ParameterDefinition } from '../../modules/catalog/dictionary.ts';
import type { CampaignStatus, CampaignType, PaymentType } from './protocol.ts';

export type { CampaignStatus, CampaignType, PaymentType, WriteOffType } from './protocol.ts';
export { CAMPAIGN_STATUSES, CAMPAIGN_TYPES } from './protocol.ts';

/** Where and as whom the connector calls Market1. */
export interface Market1Account {
  /** The organization's API key, sent as `Authorization`; never logged or returned. */
  apiKey: string;
  /** Base URL without a trailing slash: the integration's `baseUrl`, else `MARKET1_API_URL` (D10.1). */
  baseUrl: string;
}

/**
 * A campaign id with what the campaign list says about it (cheap: one request for all campaigns). No type: the
 * list's type code does not tell a unified-bid from a manual-bid campaign; the details do.
 */
export interface Market1CampaignRef {
  externalId: number;
  status: CampaignStatus;
  /** Last change of the campaign on the marketplace, ISO UTC: re-read the details when it moves. */
  changeDate: string;
}

/** A campaign with its details (spec §2 Campaign, in the marketplace's terms). */
export interface Market1Campaign {
  /** The marketplace's campaign id (`Campaign.externalId`). */
  externalId: number;
  name: string;
  type: CampaignType;
  /**
   * The marketplace's type code: always 9 (the details carry no code; the document gives 9 to every campaign
   * with a unified or manual bid, and only those exist).
   */
  typeCode: number;
  status: CampaignStatus;
  /** The marketplace's status code, kept for statuses we map to `UNKNOWN`. */
  statusCode: number;
  /** ISO UTC. */
  createDate: string;
  /** ISO UTC; the last change on the marketplace. */
  changeDate: string;
  /** Last start, ISO UTC; null when never started. */
  startDate: string | null;
  /** End, ISO UTC; null when the campaign has no end (the marketplace's "2100-01-01"). */
  endDate: string | null;
  /** Daily budget in whole roubles; 0 = none (`Campaign.sum`). */
  dailyBudget: number;
  /** `CPM` (per thousand views) or `CPC` (per click), the document's payment types; another value `UNKNOWN`. */
  paymentType: PaymentType;
  /** Products (nm ids) of the campaign, ascending. */
  externalProductIds: number[];
  /** The promoted subject (the marketplace's category); null when the campaign names none. */
  subject: { id: number; name: string } | null;
}

/** One row of daily statistics: one campaign, one day, one product, summed over the marketplace's platforms. */
export interface Market1StatisticsRow {
  campaignExternalId: number;
  /** The marketplace's calendar day, `YYYY-MM-DD`. */
  date: string;
  externalProductId: number;
  /** Product name as the marketplace shows it. */
  productName: string;
  views: number;
  clicks: number;
  /** Expenses, roubles (2 decimals). */
  expenses: number;
  /** Additions to the cart. */
  addToCart: number;
  /** Orders. */
  orders: number;
  /** Ordered items (an order may hold several). */
  orderedItems: number;
  /** Orders amount, roubles (2 decimals). */
  ordersAmount: number;
}

/** What `getDailyStatistics` reads. */
export interface Market1StatisticsRequest {
  /** Campaign ids; any number (split into requests of 50). */
  externalIds: number[];
  /** First day, `YYYY-MM-DD`. */
  dateFrom: string;
  /** Last day, `YYYY-MM-DD`, inclusive; any range (split into intervals of 31 days). */
  dateTo: string;
}

/** The advertising account's money (D10.2 `getCampaignBalance`), whole roubles. */
export interface Market1Balance {
  /** The account (`BALANCE` write-off). */
  balance: number;
  /** The balance (`NET` write-off). */
  net: number;
  /** Bonuses (`BONUS` write-off). */
  bonus: number;
}

/**
 * A campaign to create (P98, P177). Only the two kinds the marketplace still creates (`POST
 * /adv/v2/seacat/save-ad`): `AUTO` is a unified-bid campaign (search and recommendations, paid per thousand
 * views), `IN_SEARCH_AND_CATALOG` a manual-bid campaign placed in search and recommendations. Both are created
 * `READY` (status 4) without a budget: the document tops up budgets of paused campaigns only, and a new campaign
 * starts once the seller has set its budget in the marketplace's cabinet.
 */
export type Market1CampaignCreate =
  | {
      type: 'AUTO';
      /** At most 128 characters. */
      name: string;
      /**
       * The subject whose products are promoted: checked by our API, not sent (the marketplace takes the
       * subjects from the products).
       */
      subjectId: number;
      /** 1–50 products (nm ids). */
      externalProductIds: number[];
    }
  | {
      type: 'IN_SEARCH_AND_CATALOG';
      /** At most 128 characters. */
      name: string;
      /** 1–50 products (nm ids). */
      externalProductIds: number[];
    };

/**
 * A subject (the marketplace's category) with its commissions, the fields of spec §2 `Market1Type`. Commission
 * values are percentages; null when the marketplace's tariff report does not list the subject.
 */
export interface Market1Subject {
  /** The subject id (`Market1Type.market1Id`; also `market2CategoryId` of the catalog dictionaries). */
  id: number;
  name: string;
  parentId: number;
  parentName: string;
  /** Sale through the marketplace's warehouse. */
  fbwCommission: number | null;
  /** From the seller's warehouse, delivered by the marketplace. */
  fbsCommission: number | null;
  /** Delivered by the seller. */
  dbsCommission: number | null;
  /** Express delivery by the seller. */
  edbsCommission: number | null;
  /** Pick-up at the seller's point. */
  cAndCCommission: number | null;
  bookingCommission: number | null;
}

/** A parent category of subjects. */
export interface Market1ParentCategory {
  id: number;
  name: string;
}

/** A parameter (characteristic) of a subject: a `getParams` parameter definition (catalog dictionary shape). */
export type Market1Parameter = ParameterDefinition;

/** An allowed value of a `SUGGEST` parameter: a dictionary file option (`fetchOption` shape). */
export interface Market1ParameterOption {
  id: number;
  value: string;
}

/**
 * Everything the service reads from and does on Market1 for one organization.
 *
 * Every method may throw (errors.ts, P92): `Market1AuthError` (401/403: key revoked or wrong →
 * `error_token_expired_or_revoked`), `Market1ApiError` (another 4xx or an answer we cannot read →
 * `error_market1_api` with the marketplace's message), `Market1RateLimitError` (429 after the bounded waits) and
 * `Market1UnavailableError` (5xx or no answer after the bounded retries, or no URL configured) — both
 * `error_market1_unavailable`. `toAppError` in errors.ts does that mapping.
 */
export interface Market1Connector {
  /** Every campaign id with its type, status and last change (one request). */
  listCampaignRefs(): Promise<Market1CampaignRef[]>;

  /** Every campaign with its details, by `externalId` (the list, then details in requests of 50). */
  listCampaigns(): Promise<Market1Campaign[]>;

  /**
   * Details of the given campaigns, by `externalId`; ids the marketplace does not know are left out.
   * Any number of ids (requests of 50).
   */
  getCampaigns(externalIds: number[]): Promise<Market1Campaign[]>;

  /**
   * Daily statistics of the given campaigns over `dateFrom..dateTo`, one row per campaign, day and product
   * (sorted by campaign, day, product). Days without activity and campaigns that never showed (READY,
   * CANCELLED, DELETED) have no rows.
   * @throws RangeError when a date is not `YYYY-MM-DD` or `dateFrom` is after `dateTo` (before any request)
   */
  getDailyStatistics(request: Market1StatisticsRequest): Promise<Market1StatisticsRow[]>;

  /** The advertising account's money. */
  getBalance(): Promise<Market1Balance>;

  /** Starts a READY or PAUSED campaign (another status → `Market1ApiError`, 422). */
  startCampaign(externalId: number): Promise<void>;

  /** Pauses an ACTIVE campaign (another status → `Market1ApiError`, 422). */
  pauseCampaign(externalId: number): Promise<void>;

  /** Finishes a READY, ACTIVE or PAUSED campaign (another status → `Market1ApiError`, 422). */
  stopCampaign(externalId: number): Promise<void>;

  /**
   * Creates a campaign (`READY`, no budget: P177) and returns its details. Never retried after a 5xx or a
   * time-out (it may have been created): such a failure is `Market1UnavailableError` with `maybeApplied: true`.
   */
  createCampaign(campaign: Market1CampaignCreate): Promise<Market1Campaign>;

  /**
   * Subjects whose name contains `query` (case-insensitive; empty = all), at most `limit` (1–1000), with
   * their commissions (the tariff report is read at most once per `commissionCacheMs` per base URL).
   */
  searchSubjects(query: string, limit: number): Promise<Market1Subject[]>;

  /** The parent categories of the subjects. */
  listParentCategories(): Promise<Market1ParentCategory[]>;

  /** The parameters of a subject, in the marketplace's order (empty for an unknown subject). */
  getSubjectParameters(subjectId: number): Promise<Market1Parameter[]>;

  /**
   * Allowed values of a parameter whose value contains `query` (case-insensitive; empty = all), at most `limit`
   * (all of them when omitted): the published directory its name links to (P178), empty for a parameter
   * without one (`INPUT`).
   */
  getParameterOptions(
    parameter: Pick<Market1Parameter, 'name'>,
    query?: string,
    limit?: number,
  ): Promise<Market1ParameterOption[]>;

  /**
   * The catalog dictionary (docs/catalog.md) of the given subjects, ready for `loadDictionary`: each subject
   * with its parent id, its parameters and every option of its `SUGGEST` parameters. Unknown subjects are left
   * out.
   */
  readDictionary(subjectIds: number[]): Promise<DictionaryFile>;
}
