/**
 * The HTTP implementation of the Market1 connector (D10.1) over the shared outbound client
 * (`src/connectors/http-client.ts`): the API key in `Authorization` (never logged: this module logs nothing),
 * batching to the marketplace's limits (`MARKET1_LIMITS`), and the bounded waits and retries of P93:
 *
 * - 429: wait `X-Ratelimit-Retry` / `Retry-After` and retry, at most `rateLimitRetries` times, never waiting
 *   longer than `maxRetryAfterSeconds` at once nor `maxTotalMs` in all, then `Market1RateLimitError`;
 * - 5xx and transport failures: `attempts` tries with exponential backoff (±20 % jitter), then
 *   `Market1UnavailableError`; mutations are retried only when nothing reached the marketplace (connection
 *   refused), since a 5xx or a time-out may hide an applied change;
 * - 401/403 → `Market1AuthError`; another 4xx or an unreadable answer → `Market1ApiError` with the
 *   marketplace's message.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingHttpHeaders } from 'node:http';
import type { Config } from '../../config.ts';
import type { DictionaryFile } from '../../modules/catalog/dictionary.ts';
import { HttpClient, HttpTransportError, type HttpResponse } from '../http-client.ts';
import type {
  Market1Account,
  Market1Balance,
  Market1Campaign,
  Market1CampaignCreate,
  Market1CampaignRef,
  Market1Connector,
  Market1Parameter,
  Market1ParameterOption,
  Market1ParentCategory,
  Market1StatisticsRequest,
  Market1StatisticsRow,
  Market1Subject,
} from './connector.ts';
import {
  Market1ApiError,
  Market1AuthError,
  Market1RateLimitError,
  Market1UnavailableError,
} from './errors.ts';
import {
  campaignStatusOf,
  campaignTypeOf,
  CONTENT_LOCALE,
  CURRENT_TYPE_CODE,
  directoryOf,
  MARKET1_DIRECTORY_PATHS,
  type DirectoryName,
  READY_STATUS_CODE,
  MARKET1_LIMITS,
  MARKET1_PATHS,
  NOT_DELETED_FROM_YEAR,
  paymentTypeOf,
  type WireBalance,
  type WireCampaign,
  type WireCampaignCount,
  type WireCampaignDetails,
  type WireCampaignStatistics,
  type WireCharacteristic,
  type WireDirectoryEntry,
  type WireCommissionReport,
  type WireContentEnvelope,
  type WireCreateCampaign,
  type WireParentCategory,
  type WireSubject,
} from './protocol.ts';

/** How long and how often one connector call waits and retries (P93). */
export interface Market1RetryPolicy {
  /** Tries of a request that fails with a 5xx or no answer, the first included (default 3). */
  attempts: number;
  /** Backoff before the first retry in ms, doubled each time, ±20 % jitter (default 500). */
  backoffMs: number;
  /** Retries after a 429 (default 4). */
  rateLimitRetries: number;
  /** Longest `Retry-After` waited, in seconds; a longer one fails at once (default 65). */
  maxRetryAfterSeconds: number;
  /** Longest time one request may spend in waits and retries, in ms (default 300,000). */
  maxTotalMs: number;
}

/** Settings of a `Market1Client`. */
export interface Market1ClientOptions {
  /** Time limit of one exchange in ms (default 30,000). */
  timeoutMs?: number;
  /** Retry policy of every connector (default `DEFAULT_RETRY_POLICY`); `forAccount` may override it. */
  retry?: Partial<Market1RetryPolicy>;
  /** How long the commission report is kept per base URL, in ms (default 1 h; the marketplace allows 1/min). */
  commissionCacheMs?: number;
  /** Largest answer accepted, in bytes (default 32 MiB: statistics of 100 campaigns × 31 days are large). */
  maxResponseBytes?: number;
}

/** The default waits and retries (suits background tasks; interactive callers pass smaller bounds). */
export const DEFAULT_RETRY_POLICY: Market1RetryPolicy = {
  attempts: 3,
  backoffMs: 500,
  rateLimitRetries: 4,
  maxRetryAfterSeconds: 65,
  maxTotalMs: 300_000,
};

/** The `user-agent` of every request to Market1. */
export const MARKET1_USER_AGENT = 'seller-ops-market1/1';

type CommissionMap = Map<number, WireCommissionReport['report'][number]>;

/**
 * Market1 connectors of one process: one connection pool and one commission cache for every organization.
 * Build it once (e.g. in the campaign group's factory) and `close()` it on shutdown.
 */
export class Market1Client {
  private readonly http: HttpClient;
  private readonly retry: Market1RetryPolicy;
  private readonly commissionCacheMs: number;
  private readonly commissions = new Map<string, { at: number; report: Promise<CommissionMap> }>();

  constructor(options: Market1ClientOptions = {}) {
    // Market1's URL is set by the operator (or is the loopback sandbox), so private addresses are allowed.
    this.http = new HttpClient({
      timeoutMs: options.timeoutMs ?? 30_000,
      allowPrivate: true,
      userAgent: MARKET1_USER_AGENT,
      maxResponseBytes: options.maxResponseBytes ?? 32 * 1024 * 1024,
    });
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.commissionCacheMs = options.commissionCacheMs ?? 3_600_000;
  }

  /** A connector acting as `account`, with `retry` overriding the client's policy (e.g. tighter for a request). */
  forAccount(account: Market1Account, retry: Partial<Market1RetryPolicy> = {}): Market1Connector {
    return new HttpMarket1Connector(
      this.http,
      { apiKey: account.apiKey, baseUrl: account.baseUrl.replace(/\/+$/, '') },
      { ...this.retry, ...retry },
      (load) => this.commissionReport(account.baseUrl, load),
    );
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.http.close();
  }

  private commissionReport(baseUrl: string, load: () => Promise<CommissionMap>): Promise<CommissionMap> {
    const cached = this.commissions.get(baseUrl);
    if (cached && Date.now() - cached.at < this.commissionCacheMs) return cached.report;
    const report = load();
    this.commissions.set(baseUrl, { at: Date.now(), report });
    report.catch(() => this.commissions.delete(baseUrl));
    return report;
  }
}

/**
 * The account of an organization's prepared integration (`findPreparedIntegration`): its key, at its
 * `baseUrl`, else at `MARKET1_API_URL` (D10.1; on the embedded default that is the sandbox).
 * @throws Market1UnavailableError (`not_configured`) when neither is set
 */
export function market1AccountOf(
  integration: { apiKey: string; baseUrl: string | null },
  config: Pick<Config, 'market1ApiUrl'>,
): Market1Account {
  const baseUrl = integration.baseUrl ?? config.market1ApiUrl;
  if (!baseUrl)
    throw new Market1UnavailableError(
      'not_configured',
      'no Market1 URL: set MARKET1_API_URL or the integration baseUrl',
    );
  return { apiKey: integration.apiKey, baseUrl };
}

/** One request to Market1. */
interface CallSpec {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** A change on the marketplace: not retried once it may have reached it. */
  mutation?: boolean;
}

class HttpMarket1Connector implements Market1Connector {
  constructor(
    private readonly http: HttpClient,
    private readonly account: Market1Account,
    private readonly retry: Market1RetryPolicy,
    private readonly commissions: (load: () => Promise<CommissionMap>) => Promise<CommissionMap>,
  ) {}

  async listCampaignRefs(): Promise<Market1CampaignRef[]> {
    const count = await this.call<WireCampaignCount>({ method: 'GET', path: MARKET1_PATHS.campaignCount });
    const refs = (count.adverts ?? []).flatMap((group) =>
      group.advert_list.map((entry) => ({
        externalId: entry.advertId,
        status: campaignStatusOf(group.status),
        changeDate: isoUtc(entry.changeTime),
      })),
    );
    return refs.sort((a, b) => a.externalId - b.externalId);
  }

  async listCampaigns(): Promise<Market1Campaign[]> {
    const refs = await this.listCampaignRefs();
    return this.getCampaigns(refs.map((ref) => ref.externalId));
  }

  async getCampaigns(externalIds: number[]): Promise<Market1Campaign[]> {
    const campaigns: Market1Campaign[] = [];
    for (const ids of chunks(unique(externalIds), MARKET1_LIMITS.campaignIdsPerDetailsRequest)) {
      const answer = await this.call<WireCampaignDetails>({
        method: 'GET',
        path: MARKET1_PATHS.campaignDetails,
        query: { ids: ids.join(',') },
      });
      campaigns.push(...(answer?.adverts ?? []).map(toCampaign));
    }
    return campaigns.sort((a, b) => a.externalId - b.externalId);
  }

  async getDailyStatistics(request: Market1StatisticsRequest): Promise<Market1StatisticsRow[]> {
    const windows = dayWindows(request.dateFrom, request.dateTo, MARKET1_LIMITS.daysPerStatisticsInterval);
    const rows = new Map<string, Market1StatisticsRow & { expenseCents: number; amountCents: number }>();
    for (const ids of chunks(unique(request.externalIds), MARKET1_LIMITS.campaignsPerStatisticsRequest)) {
      for (const [begin, end] of windows) {
        const answer = await this.call<WireCampaignStatistics[] | null>({
          method: 'GET',
          path: MARKET1_PATHS.fullStatistics,
          query: { ids: ids.join(','), beginDate: begin, endDate: end },
        });
        for (const campaign of answer ?? [])
          for (const day of campaign.days ?? [])
            for (const platform of day.apps ?? [])
              for (const product of platform.nms ?? []) {
                const date = day.date.slice(0, 10);
                const key = `${campaign.advertId}|${date}|${product.nmId}`;
                let row = rows.get(key);
                if (!row) {
                  row = {
                    campaignExternalId: campaign.advertId,
                    date,
                    externalProductId: product.nmId,
                    productName: product.name,
                    views: 0,
                    clicks: 0,
                    expenses: 0,
                    addToCart: 0,
                    orders: 0,
                    orderedItems: 0,
                    ordersAmount: 0,
                    expenseCents: 0,
                    amountCents: 0,
                  };
                  rows.set(key, row);
                }
                row.views += product.views;
                row.clicks += product.clicks;
                row.addToCart += product.atbs;
                row.orders += product.orders;
                row.orderedItems += product.shks;
                row.expenseCents += Math.round(product.sum * 100);
                row.amountCents += Math.round(product.sum_price * 100);
              }
      }
    }
    return [...rows.values()]
      .map(({ expenseCents, amountCents, ...row }) => ({
        ...row,
        expenses: expenseCents / 100,
        ordersAmount: amountCents / 100,
      }))
      .sort(
        (a, b) =>
          a.campaignExternalId - b.campaignExternalId ||
          a.date.localeCompare(b.date) ||
          a.externalProductId - b.externalProductId,
      );
  }

  async getBalance(): Promise<Market1Balance> {
    const answer = await this.call<WireBalance>({ method: 'GET', path: MARKET1_PATHS.balance });
    return { balance: answer.balance, net: answer.net, bonus: answer.bonus };
  }

  async startCampaign(externalId: number): Promise<void> {
    await this.changeStatus(MARKET1_PATHS.start, externalId);
  }

  async pauseCampaign(externalId: number): Promise<void> {
    await this.changeStatus(MARKET1_PATHS.pause, externalId);
  }

  async stopCampaign(externalId: number): Promise<void> {
    await this.changeStatus(MARKET1_PATHS.stop, externalId);
  }

  async createCampaign(campaign: Market1CampaignCreate): Promise<Market1Campaign> {
    const unified = campaign.type === 'AUTO';
    const body: WireCreateCampaign = {
      name: campaign.name,
      nms: campaign.externalProductIds,
      bid_type: unified ? 'unified' : 'manual',
      payment_type: 'cpm',
      ...(!unified && { placement_types: ['search', 'recommendations'] }),
    };
    const answer = await this.call({ method: 'POST', path: MARKET1_PATHS.create, body, mutation: true });
    const externalId = Number(answer);
    if (!Number.isSafeInteger(externalId) || externalId <= 0)
      throw new Market1ApiError(200, 'the marketplace did not return the new campaign id');
    const [created] = await this.getCampaigns([externalId]);
    if (created) return created;
    // The marketplace publishes new campaigns with a delay: answer with what it was asked to create (READY).
    const now = new Date().toISOString();
    return {
      externalId,
      name: campaign.name,
      type: campaign.type,
      typeCode: CURRENT_TYPE_CODE,
      status: campaignStatusOf(READY_STATUS_CODE),
      statusCode: READY_STATUS_CODE,
      createDate: now,
      changeDate: now,
      startDate: null,
      endDate: null,
      dailyBudget: 0,
      paymentType: 'CPM',
      externalProductIds: unique(campaign.externalProductIds),
      subject: null,
    };
  }

  async searchSubjects(query: string, limit: number): Promise<Market1Subject[]> {
    const subjects = await this.content<WireSubject[] | null>(MARKET1_PATHS.subjects, {
      name: query.trim() || undefined,
      limit: Math.min(Math.max(1, Math.trunc(limit)), MARKET1_LIMITS.subjectsPerRequest),
      offset: 0,
    });
    const commissions = await this.commissions(() => this.loadCommissions());
    return (subjects ?? []).map((subject) => {
      const tariff = commissions.get(subject.subjectID);
      return {
        id: subject.subjectID,
        name: subject.subjectName,
        parentId: subject.parentID,
        parentName: subject.parentName,
        fbwCommission: tariff?.paidStorageKgvp ?? null,
        fbsCommission: tariff?.kgvpMarketplace ?? null,
        dbsCommission: tariff?.kgvpSupplier ?? null,
        edbsCommission: tariff?.kgvpSupplierExpress ?? null,
        cAndCCommission: tariff?.kgvpPickup ?? null,
        bookingCommission: tariff?.kgvpBooking ?? null,
      };
    });
  }

  async listParentCategories(): Promise<Market1ParentCategory[]> {
    const parents = await this.content<WireParentCategory[] | null>(MARKET1_PATHS.parentCategories);
    return (parents ?? []).map((parent) => ({ id: parent.id, name: parent.name }));
  }

  async getSubjectParameters(subjectId: number): Promise<Market1Parameter[]> {
    const characteristics = await this.content<WireCharacteristic[] | null>(
      `${MARKET1_PATHS.characteristics}/${encodeURIComponent(subjectId)}`,
      { locale: CONTENT_LOCALE },
    );
    return (characteristics ?? []).map((characteristic) => ({
      id: characteristic.charcID,
      name: characteristic.name,
      valueType: characteristic.charcType === 4 ? 'NUMBER' : 'STRING',
      multiValueAllowed: characteristic.maxCount !== 1,
      displayType: directoryOf(characteristic.name) ? 'SUGGEST' : 'INPUT',
      required: characteristic.required,
      unit: characteristic.unitName || null,
    }));
  }

  async getParameterOptions(
    parameter: Pick<Market1Parameter, 'name'>,
    query = '',
    limit = Number.POSITIVE_INFINITY,
  ): Promise<Market1ParameterOption[]> {
    const directory = directoryOf(parameter.name);
    if (!directory) return [];
    const wanted = query.trim().toLowerCase();
    return (await this.directory(directory))
      .filter((option) => option.value.toLowerCase().includes(wanted))
      .slice(0, limit);
  }

  async readDictionary(subjectIds: number[]): Promise<DictionaryFile> {
    const wanted = new Set(subjectIds);
    const subjects: WireSubject[] = [];
    const page = MARKET1_LIMITS.subjectsPerRequest;
    for (let offset = 0; ; offset += page) {
      const batch = await this.content<WireSubject[] | null>(MARKET1_PATHS.subjects, { limit: page, offset });
      subjects.push(...(batch ?? []).filter((subject) => wanted.has(subject.subjectID)));
      if (!batch || batch.length < page) break;
    }
    const categories: DictionaryFile['categories'] = [];
    // Each directory is read once per dictionary: every subject's color, country… share it.
    const directories = new Map<DirectoryName, Promise<Market1ParameterOption[]>>();
    for (const subject of subjects.sort((a, b) => a.subjectID - b.subjectID)) {
      const parameters: DictionaryFile['categories'][number]['parameters'] = [];
      for (const parameter of await this.getSubjectParameters(subject.subjectID)) {
        const directory = directoryOf(parameter.name);
        if (!directory) {
          parameters.push(parameter);
          continue;
        }
        if (!directories.has(directory)) directories.set(directory, this.directory(directory));
        parameters.push({ ...parameter, options: await directories.get(directory)! });
      }
      categories.push({
        id: subject.subjectID,
        name: subject.subjectName,
        parentId: subject.parentID,
        parameters,
      });
    }
    return { categories };
  }

  /**
   * The values of a published directory as options (P178): the value is the entry's name, the id a stable
   * function of it (`optionIdOf`), since the directories publish no ids. Duplicate names are kept once.
   */
  private async directory(directory: DirectoryName): Promise<Market1ParameterOption[]> {
    const entries = await this.content<WireDirectoryEntry[] | null>(MARKET1_DIRECTORY_PATHS[directory], {
      locale: CONTENT_LOCALE,
    });
    const values = new Set((entries ?? []).map((entry) => (typeof entry === 'string' ? entry : entry.name)));
    return [...values]
      .filter((value) => value.trim() !== '')
      .map((value) => ({ id: optionIdOf(value), value }));
  }

  private async changeStatus(path: string, externalId: number): Promise<void> {
    await this.call({ method: 'GET', path, query: { id: externalId }, mutation: true });
  }

  private async loadCommissions(): Promise<CommissionMap> {
    const answer = await this.call<WireCommissionReport>({
      method: 'GET',
      path: MARKET1_PATHS.commissions,
      query: { locale: 'ru' },
    });
    return new Map((answer.report ?? []).map((row) => [row.subjectID, row]));
  }

  /** A content API read: the `data` of its envelope. */
  private async content<T>(path: string, query?: CallSpec['query']): Promise<T> {
    const envelope = await this.call<WireContentEnvelope<T>>({ method: 'GET', path, query });
    if (envelope.error) throw new Market1ApiError(200, envelope.errorText || 'content API error');
    return envelope.data;
  }

  /** Sends one request with the waits and retries of P93 and returns its parsed JSON (undefined when empty). */
  private async call<T = unknown>(spec: CallSpec): Promise<T> {
    const url = new URL(this.account.baseUrl + spec.path);
    for (const [name, value] of Object.entries(spec.query ?? {}))
      if (value !== undefined) url.searchParams.set(name, String(value));
    const started = Date.now();
    let failures = 0;
    let throttles = 0;
    for (;;) {
      let response: HttpResponse;
      try {
        response = await this.http.request({
          method: spec.method,
          url,
          headers: { authorization: this.account.apiKey, accept: 'application/json' },
          ...(spec.body !== undefined && { body: spec.body as object }),
        });
      } catch (error) {
        if (!(error instanceof HttpTransportError)) throw error;
        const reason = error.kind === 'timeout' ? 'timeout' : 'network';
        const nothingSent = error.kind === 'refused_target' || /^ECONNREFUSED/.test(error.message);
        failures += 1;
        if (error.kind === 'refused_target' || error.kind === 'too_large' || (spec.mutation && !nothingSent))
          throw new Market1UnavailableError(reason, error.message, spec.mutation === true && !nothingSent);
        await this.backoff(failures, started, () => new Market1UnavailableError(reason, error.message));
        continue;
      }
      const { status } = response;
      if (status === 429) {
        const retryAfter = retryAfterSeconds(response.headers);
        throttles += 1;
        if (
          throttles > this.retry.rateLimitRetries ||
          retryAfter > this.retry.maxRetryAfterSeconds ||
          Date.now() - started + retryAfter * 1000 > this.retry.maxTotalMs
        )
          throw new Market1RateLimitError(Math.ceil(retryAfter));
        await sleep(retryAfter * 1000);
        continue;
      }
      if (status >= 500) {
        const detail = `HTTP ${status}: ${messageOf(response)}`;
        failures += 1;
        if (spec.mutation) throw new Market1UnavailableError('http_5xx', detail, true);
        await this.backoff(failures, started, () => new Market1UnavailableError('http_5xx', detail));
        continue;
      }
      if (status === 401 || status === 403) throw new Market1AuthError(status, messageOf(response));
      if (status >= 300) throw new Market1ApiError(status, messageOf(response));
      if (response.text.trim() === '') return undefined as T;
      try {
        return response.json<T>();
      } catch {
        throw new Market1ApiError(status, 'the marketplace answered with something that is not JSON');
      }
    }
  }

  /** Waits before retry number `failures`, or throws `giveUp()` when the attempts or the time are spent. */
  private async backoff(failures: number, started: number, giveUp: () => Error): Promise<void> {
    const delay = this.retry.backoffMs * 2 ** (failures - 1) * (0.8 + Math.random() * 0.4);
    if (failures >= this.retry.attempts || Date.now() - started + delay > this.retry.maxTotalMs)
      throw giveUp();
    await sleep(delay);
  }
}

/** Our campaign from the marketplace's details (P91); times converted from their offset to UTC. */
function toCampaign(wire: WireCampaign): Market1Campaign {
  const products = wire.nm_settings ?? [];
  const subject = products[0]?.subject ?? null;
  // The year as written (with its offset): 2100-01-01T00:00:00+03:00 is still 2099 in UTC.
  const deleted = wire.timestamps.deleted ?? '';
  const ended = Number.isFinite(Date.parse(deleted)) && Number(deleted.slice(0, 4)) < NOT_DELETED_FROM_YEAR;
  return {
    externalId: wire.id,
    name: wire.settings.name,
    type: campaignTypeOf(wire.bid_type),
    typeCode: CURRENT_TYPE_CODE,
    status: campaignStatusOf(wire.status),
    statusCode: wire.status,
    createDate: isoUtc(wire.timestamps.created),
    changeDate: isoUtc(wire.timestamps.updated),
    startDate: wire.timestamps.started ? isoUtc(wire.timestamps.started) : null,
    endDate: ended ? isoUtc(wire.timestamps.deleted) : null,
    dailyBudget: 0,
    paymentType: paymentTypeOf(wire.settings.payment_type),
    externalProductIds: unique(products.map((product) => product.nm_id)),
    subject: subject ? { id: subject.id, name: subject.name } : null,
  };
}

/**
 * The seconds a 429 asks to wait: the marketplace's `X-Ratelimit-Retry` (the time until its token bucket has a
 * token again; fractions accepted), else `Retry-After`, else 1.
 */
function retryAfterSeconds(headers: IncomingHttpHeaders): number {
  for (const name of ['x-ratelimit-retry', 'retry-after']) {
    const value = headers[name];
    if (typeof value !== 'string' || value.trim() === '') continue;
    const seconds = Number(value);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds;
    const date = Date.parse(value);
    if (Number.isFinite(date)) return Math.max(0, Math.ceil((date - Date.now()) / 1000));
  }
  return 1;
}

/**
 * The marketplace's message in an error answer: a JSON string (`save-ad`, `balance`), the `error`,
 * `errorText`, `detail`… of a JSON object, or the text itself (`text/plain` answers such as 422 of `start`).
 */
function messageOf(response: HttpResponse): string {
  try {
    const body = response.json<unknown>();
    if (typeof body === 'string' && body !== '') return body;
    if (typeof body === 'object' && body !== null)
      for (const field of ['error', 'errorText', 'detail', 'message', 'title']) {
        const value = (body as Record<string, unknown>)[field];
        if (typeof value === 'string' && value !== '') return value;
      }
  } catch {
    // not JSON: the text itself is the message
  }
  const text = response.text.trim().slice(0, 500);
  return text === '' ? `HTTP ${response.status}` : text;
}

function isoUtc(timestamp: string): string {
  const time = Date.parse(timestamp);
  return Number.isFinite(time) ? new Date(time).toISOString() : timestamp;
}

/**
 * The option id of a directory value (P178): the first 48 bits of the SHA-256 of the value, so the same value
 * keeps its id across refreshes and accounts (the directories publish names only).
 */
export function optionIdOf(value: string): number {
  return createHash('sha256').update(value).digest().readUIntBE(0, 6);
}

function unique(ids: number[]): number[] {
  return [...new Set(ids)].sort((a, b) => a - b);
}

function chunks<T>(items: T[], size: number): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}

const DAY_MS = 86_400_000;

/**
 * `dateFrom..dateTo` (inclusive, `YYYY-MM-DD`) cut into consecutive windows of at most `days` days.
 * @throws RangeError for a malformed date or a reversed range
 */
export function dayWindows(dateFrom: string, dateTo: string, days: number): [string, string][] {
  const from = parseDay(dateFrom);
  const to = parseDay(dateTo);
  if (from > to) throw new RangeError(`dateFrom ${dateFrom} is after dateTo ${dateTo}`);
  const windows: [string, string][] = [];
  for (let start = from; start <= to; start += days * DAY_MS) {
    const end = Math.min(start + (days - 1) * DAY_MS, to);
    windows.push([formatDay(start), formatDay(end)]);
  }
  return windows;
}

function parseDay(day: string): number {
  const time = /^\d{4}-\d{2}-\d{2}$/.test(day) ? Date.parse(`${day}T00:00:00Z`) : NaN;
  if (!Number.isFinite(time) || formatDay(time) !== day)
    throw new RangeError(`not a YYYY-MM-DD date: ${day}`);
  return time;
}

function formatDay(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}
