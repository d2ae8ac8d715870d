/**
 * The Market1 sandbox (P94–P96): a Fastify server that speaks the marketplace's promotion, content and tariff
 * protocol as its published documents give it (`protocol.ts`, docs/market1.md) over the deterministic data of
 * `sandbox-data.ts`, for the tests, `npm run sandbox` (port 8093) and the embedded default when
 * `MARKET1_API_URL` is unset.
 *
 * - Credentials: any non-empty `Authorization` value is an API key (a `Bearer ` prefix is ignored) with its own
 *   account, so an operator trying the service with any key sees it work. Refusals are the control API's:
 *   revoked keys (401 from then on) and the `401`/`403` fault modes.
 * - Rate limits: the published token buckets (`MARKET1_RATE_LIMITS`: burst, one token per interval) per key and
 *   operation; beyond them 429 with `X-Ratelimit-Retry` and `Retry-After`. `rateLimits` (option or control
 *   API) turns them off or scales their intervals so tests stay fast.
 * - Answers in the documents' shapes: timestamps with `+03:00`, statistics days as Moscow calendar days, error
 *   bodies per operation (`{error}`, the gateway's problem object, a JSON string, or `text/plain` for 422).
 * - State changes (start, pause, stop, create, deposit) live in memory per key until `POST /__sandbox/reset`.
 * - Control API under `/__sandbox/` (no key, no limits): faults (401, 403, 429, 5xx, slow answers), key
 *   revocation, rate-limit settings, the log of recent requests, reset, and the cabinet's budget of a campaign.
 * - `onExchange` (option) sees every request and answer of the marketplace's paths, for the conformance tests.
 */
import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { serveSandbox, type SandboxApp, type SandboxServer } from '../sandboxes.ts';
import {
  DOCUMENTED_STATUS_CODES,
  type DirectoryName,
  MARKET1_DIRECTORY_PATHS,
  MARKET1_LIMITS,
  MARKET1_PATHS,
  MARKET1_RATE_LIMITS,
  type RateLimitGroup,
  type WireBudgetDeposit,
  type WireCampaignCount,
  type WireCampaignStatistics,
  type WireCharacteristic,
  type WireCommissionReport,
  type WireContentEnvelope,
  marketplaceTimestamp,
  writeOffTypeOf,
} from './protocol.ts';
import {
  dayOf,
  findSubject,
  generateAccount,
  renderCampaign,
  renderStatistics,
  SANDBOX_DIRECTORIES,
  SANDBOX_PARENTS,
  SANDBOX_SUBJECTS,
  type SandboxAccount,
  type SandboxCampaign,
} from './sandbox-data.ts';

/** How the sandbox applies the marketplace's rate limits. */
export type SandboxRateLimits =
  /** The published limits (the default). */
  | 'real'
  /** No limits. */
  | 'off'
  /** The published buckets with every interval multiplied by `scale` (e.g. 0.01: 20 s become 0.2 s). */
  | { scale: number };

/** One request to a marketplace path and the sandbox's answer, as `onExchange` sees it. */
export interface SandboxExchange {
  method: string;
  /** The path without the query. */
  path: string;
  /** Query parameters as sent (last value of a repeated one). */
  query: Record<string, string>;
  /** `content-type` of the request, or undefined without a body. */
  requestContentType: string | undefined;
  /** The parsed JSON body, or undefined. */
  requestBody: unknown;
  status: number;
  /** `content-type` of the answer, or undefined without a body. */
  responseContentType: string | undefined;
  /** The answer's body as text. */
  responseText: string;
  /** The fault mode that answered (or slowed) it, when one did: outside the published protocol on purpose. */
  fault: SandboxFault['mode'] | undefined;
}

/** Settings of a sandbox. */
export interface Market1SandboxOptions {
  host: string;
  /** 0 = any free port. */
  port: number;
  /** Default `real`. */
  rateLimits?: SandboxRateLimits;
  /** Called with every exchange of a marketplace path (not the control API). */
  onExchange?: (exchange: SandboxExchange) => void;
}

/** A fault the sandbox injects into the next `count` matching requests (`POST /__sandbox/faults`). */
export interface SandboxFault {
  /** 401/403: a refused key; 429: throttled with `retryAfterSeconds`; 5xx: `status` (503); slow: `delayMs`. */
  mode: '401' | '403' | '429' | '5xx' | 'slow';
  /** Requests affected (default 1). */
  count: number;
  /** `slow`: delay before the normal answer, in ms (default 2000). */
  delayMs: number;
  /** `429`: the `Retry-After` seconds (default 1). */
  retryAfterSeconds: number;
  /** `5xx`: the status (default 503). */
  status: number;
  /** Only requests with this API key (default: any). */
  apiKey?: string;
  /** Only requests whose path starts with this (default: any). */
  path?: string;
}

/** One request of the sandbox's log (`GET /__sandbox/requests`); the key only as a fingerprint. */
export interface SandboxRequestLog {
  method: string;
  path: string;
  query: string;
  status: number;
  /** SHA-256 prefix of the API key (`keyFingerprint`). */
  key: string;
  /** Campaign ids of an `ids` query parameter (details, statistics). */
  items?: number;
}

/** The sandbox's fingerprint of an API key: the first 16 hex digits of its SHA-256. */
export function keyFingerprint(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex').slice(0, 16);
}

const MAX_ACCOUNTS = 1000;
const MAX_LOGGED_REQUESTS = 2000;
const MAX_BUCKETS = 10_000;
const DAY_MS = 86_400_000;

/** A marketplace error answer: thrown by handlers, rendered by the error handler. */
class WireError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: unknown,
    /** `text/plain` answers (422 of start/pause/stop); JSON otherwise. */
    readonly plain = false,
  ) {
    super(`HTTP ${statusCode}`);
  }
}

/** The promotion API's `{error}` body (`400Response`: start, pause, stop, deposit). */
const advError = (status: number, message: string) => new WireError(status, { error: message });

/** The promotion API's problem body (`response400`, `FullStatsError`: details, statistics). */
const payloadError = (detail: string) =>
  new WireError(400, {
    detail,
    origin: 'camp-api-public-cache',
    request_id: randomBytes(16).toString('hex'),
    status: 400,
    title: 'invalid payload',
  });

/** A JSON string body (400 of create and balance). */
const stringError = (message: string) => new WireError(400, message);

/** The content API's error envelope. */
const contentError = (message: string) =>
  new WireError(400, { data: null, error: true, errorText: message, additionalErrors: null });

/** The gateway's problem body (401, 403, 429, 5xx; `components/responses/401`). */
function problem(status: number, title: string, detail: string) {
  return new WireError(status, {
    title,
    detail,
    code: randomBytes(6).toString('hex'),
    requestId: randomBytes(16).toString('hex'),
    origin: 's2s-api-auth-catalog',
    status,
    statusText: title,
    timestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
  });
}

const envelope = <T>(data: T): WireContentEnvelope<T> => ({
  data,
  error: false,
  errorText: '',
  additionalErrors: null,
});

/** A token bucket of one key and operation: `tokens` at `at` (ms). */
interface Bucket {
  tokens: number;
  at: number;
}

class SandboxState {
  accounts = new Map<string, SandboxAccount>();
  revoked = new Set<string>();
  faults: SandboxFault[] = [];
  requests: SandboxRequestLog[] = [];
  buckets = new Map<string, Bucket>();
  rateLimits: SandboxRateLimits;

  constructor(rateLimits: SandboxRateLimits) {
    this.rateLimits = rateLimits;
  }

  account(fingerprint: string): SandboxAccount {
    let account = this.accounts.get(fingerprint);
    if (!account) {
      if (this.accounts.size >= MAX_ACCOUNTS) this.accounts.delete(this.accounts.keys().next().value!);
      account = generateAccount(fingerprint);
      this.accounts.set(fingerprint, account);
    }
    return account;
  }

  /**
   * Takes a token of `group`'s bucket for `fingerprint` (P96): the bucket holds at most `burst` tokens and
   * regains one every `intervalMs` (scaled). Returns the ms to wait when it is empty, else 0.
   */
  take(fingerprint: string, group: RateLimitGroup): { waitMs: number; remaining: number; limit: number } {
    const limit = MARKET1_RATE_LIMITS[group];
    if (this.rateLimits === 'off') return { waitMs: 0, remaining: limit.burst, limit: limit.burst };
    const scale = typeof this.rateLimits === 'object' ? this.rateLimits.scale : 1;
    const interval = Math.max(1, limit.intervalMs * scale);
    const key = `${fingerprint}|${group}`;
    const now = Date.now();
    const bucket = this.buckets.get(key) ?? { tokens: limit.burst, at: now };
    bucket.tokens = Math.min(limit.burst, bucket.tokens + (now - bucket.at) / interval);
    bucket.at = now;
    if (this.buckets.size >= MAX_BUCKETS && !this.buckets.has(key))
      this.buckets.delete(this.buckets.keys().next().value!);
    this.buckets.set(key, bucket);
    if (bucket.tokens < 1)
      return { waitMs: (1 - bucket.tokens) * interval, remaining: 0, limit: limit.burst };
    bucket.tokens -= 1;
    return { waitMs: 0, remaining: Math.floor(bucket.tokens), limit: limit.burst };
  }

  reset(): void {
    this.accounts.clear();
    this.revoked.clear();
    this.faults = [];
    this.requests = [];
    this.buckets.clear();
  }
}

function apiKeyOf(request: FastifyRequest): string {
  const header = request.headers.authorization ?? '';
  return header.replace(/^bearer\s+/i, '').trim();
}

function integer(value: unknown, name: string, fail: (message: string) => Error): number {
  const parsed = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  if (!Number.isSafeInteger(parsed)) throw fail(`${name} must be an integer`);
  return parsed;
}

function optionalInteger(value: unknown, name: string, fallback: number, fail: (m: string) => Error): number {
  return value === undefined || value === '' ? fallback : integer(value, name, fail);
}

/** A marketplace day (`dayOf`) of a `YYYY-MM-DD` parameter. */
function parseDay(value: unknown, name: string): number {
  const time =
    typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : NaN;
  if (!Number.isFinite(time)) throw payloadError(`invalid ${name}`);
  return time;
}

/** The ids of an `ids` query parameter (`1,2,3`), 1 to `max` of them. */
function idsOf(value: string | undefined, max: number, required: boolean): number[] | undefined {
  if (value === undefined || value === '') {
    if (required) throw payloadError('invalid ids');
    return undefined;
  }
  const ids = value.split(',').map((id) => Number(id.trim()));
  if (ids.some((id) => !Number.isSafeInteger(id) || id <= 0)) throw payloadError('invalid ids');
  if (ids.length > max) throw payloadError(`too many ids: at most ${max}`);
  return ids;
}

/** The seconds of a wait as the `X-Ratelimit-Retry` header writes them (fractions when the buckets are scaled). */
const seconds = (ms: number) => String(Math.ceil(ms) / 1000);

/**
 * Starts a sandbox on `options.host`:`options.port` and resolves once it listens.
 * @throws Error when the port is taken
 */
export function startMarket1Sandbox(options: Market1SandboxOptions): Promise<SandboxServer> {
  return serveSandbox({ name: 'market1', build: () => buildMarket1Sandbox(options) }, options);
}

/** Builds a sandbox (not listening) with new, empty state; `host` and `port` of `options` are not used. */
export function buildMarket1Sandbox(options: Omit<Market1SandboxOptions, 'host' | 'port'>): SandboxApp {
  const state = new SandboxState(options.rateLimits ?? 'real');
  const app = Fastify({ logger: false, bodyLimit: 5 * 1024 * 1024 });
  const isControl = (request: FastifyRequest) => request.url.startsWith('/__sandbox/');
  const faulted = new WeakMap<FastifyRequest, SandboxFault['mode']>();

  app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
    if (error instanceof WireError) {
      if (error.plain) return reply.code(error.statusCode).type('text/plain; charset=utf-8').send(error.body);
      // A JSON string body must be serialized by hand: Fastify sends a string as it is.
      return reply
        .code(error.statusCode)
        .type('application/json; charset=utf-8')
        .send(JSON.stringify(error.body));
    }
    if (error.statusCode !== undefined && error.statusCode < 500)
      return reply.code(400).send({ error: error.message });
    return reply.code(500).send(problem(500, 'internal server error', error.message).body);
  });
  app.setNotFoundHandler((_request, reply) =>
    reply.code(404).send(problem(404, 'path not found', 'check the request URL').body),
  );

  // Faults come first: an injected 429 or 5xx answers before the rate limits count the request.
  app.addHook('onRequest', async (request, reply) => {
    if (isControl(request)) return;
    const key = apiKeyOf(request);
    const path = request.url.split('?')[0]!;
    const fault = state.faults.find(
      (candidate) =>
        candidate.count > 0 &&
        (candidate.apiKey === undefined || candidate.apiKey === key) &&
        (candidate.path === undefined || path.startsWith(candidate.path)),
    );
    if (!fault) return;
    fault.count -= 1;
    state.faults = state.faults.filter((candidate) => candidate.count > 0);
    faulted.set(request, fault.mode);
    switch (fault.mode) {
      case 'slow':
        await sleep(fault.delayMs);
        return;
      case '401':
        throw problem(401, 'unauthorized', 'token is expired or revoked');
      case '403':
        throw problem(403, 'forbidden', 'access to this method is denied for the token');
      case '429':
        reply.header('retry-after', String(fault.retryAfterSeconds));
        reply.header('x-ratelimit-retry', String(fault.retryAfterSeconds));
        throw problem(429, 'too many requests', 'limited by the sandbox fault');
      case '5xx':
        throw problem(fault.status, 'service unavailable', 'the sandbox was told to fail');
    }
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (isControl(request) || !options.onExchange) return payload;
    const query = Object.fromEntries(new URL(request.url, 'http://sandbox').searchParams);
    const type = reply.getHeader('content-type');
    options.onExchange({
      method: request.method,
      path: request.url.split('?')[0]!,
      query,
      requestContentType: request.headers['content-type'],
      requestBody: request.body,
      status: reply.statusCode,
      responseContentType: typeof type === 'string' ? type : undefined,
      responseText:
        typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : '',
      fault: faulted.get(request),
    });
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    if (isControl(request)) return;
    const [path, query = ''] = request.url.split('?') as [string, string?];
    const ids = new URLSearchParams(query).get('ids');
    state.requests.push({
      method: request.method,
      path,
      query,
      status: reply.statusCode,
      key: keyFingerprint(apiKeyOf(request)),
      ...(ids !== null && { items: ids.split(',').length }),
    });
    if (state.requests.length > MAX_LOGGED_REQUESTS) state.requests.shift();
  });

  /** Route options of a marketplace operation: the key check, then a token of its rate-limit bucket. */
  const method = (group: RateLimitGroup) => ({
    preHandler: async (request: FastifyRequest, reply: FastifyReply) => {
      const key = apiKeyOf(request);
      if (key === '') throw problem(401, 'unauthorized', 'empty Authorization header');
      const fingerprint = keyFingerprint(key);
      if (state.revoked.has(fingerprint)) throw problem(401, 'unauthorized', 'token is revoked');
      const { waitMs, remaining, limit } = state.take(fingerprint, group);
      reply.header('x-ratelimit-limit', String(limit));
      reply.header('x-ratelimit-remaining', String(remaining));
      if (waitMs > 0) {
        reply.header('x-ratelimit-retry', seconds(waitMs));
        reply.header('retry-after', String(Math.ceil(waitMs / 1000)));
        throw problem(429, 'too many requests', `limited by the ${group} bucket`);
      }
    },
  });
  const accountOf = (request: FastifyRequest) => state.account(keyFingerprint(apiKeyOf(request)));
  const queryOf = (request: FastifyRequest) => request.query as Record<string, string | undefined>;

  // ---- Promotion -------------------------------------------------------------------------------------------

  app.get(
    MARKET1_PATHS.campaignCount,
    method('campaignCount'),
    async (request): Promise<WireCampaignCount> => {
      const groups = new Map<string, SandboxCampaign[]>();
      for (const campaign of accountOf(request).campaigns.values()) {
        const key = `${campaign.type}|${campaign.status}`;
        groups.set(key, [...(groups.get(key) ?? []), campaign]);
      }
      const adverts = [...groups.values()].map((campaigns) => ({
        type: campaigns[0]!.type,
        status: campaigns[0]!.status,
        count: campaigns.length,
        advert_list: campaigns.map((campaign) => ({
          advertId: campaign.advertId,
          changeTime: marketplaceTimestamp(campaign.changeTime),
        })),
      }));
      return { adverts, all: accountOf(request).campaigns.size };
    },
  );

  app.get(MARKET1_PATHS.campaignDetails, method('campaignDetails'), async (request) => {
    const query = queryOf(request);
    const account = accountOf(request);
    const ids = idsOf(query.ids, MARKET1_LIMITS.campaignIdsPerDetailsRequest, false);
    const statuses =
      query.statuses === undefined || query.statuses === ''
        ? undefined
        : query.statuses.split(',').map((status) => Number(status.trim()));
    if (statuses?.some((status) => !DOCUMENTED_STATUS_CODES.includes(status)))
      throw payloadError('invalid statuses value');
    if (query.payment_type !== undefined && !['cpm', 'cpc'].includes(query.payment_type))
      throw payloadError('invalid payment_type value');
    const candidates = ids
      ? ids.map((id) => account.campaigns.get(id)).filter((campaign) => campaign !== undefined)
      : [...account.campaigns.values()];
    const adverts = candidates
      .filter((campaign) => statuses === undefined || statuses.includes(campaign.status))
      .filter((campaign) => query.payment_type === undefined || campaign.paymentType === query.payment_type)
      .map((campaign) => renderCampaign(account, campaign));
    return { adverts };
  });

  app.get(MARKET1_PATHS.fullStatistics, method('statistics'), async (request) => {
    const query = queryOf(request);
    const ids = idsOf(query.ids, MARKET1_LIMITS.campaignsPerStatisticsRequest, true)!;
    const begin = parseDay(query.beginDate, 'beginDate');
    const end = parseDay(query.endDate, 'endDate');
    if (begin > end) throw payloadError('beginDate is after endDate');
    if ((end - begin) / DAY_MS + 1 > MARKET1_LIMITS.daysPerStatisticsInterval)
      throw payloadError(`the period is at most ${MARKET1_LIMITS.daysPerStatisticsInterval} days`);
    const account = accountOf(request);
    const answer: WireCampaignStatistics[] = [];
    for (const id of new Set(ids)) {
      const campaign = account.campaigns.get(id);
      const statistics = campaign && renderStatistics(account, campaign, begin, end);
      if (statistics) answer.push(statistics);
    }
    return answer;
  });

  app.get(MARKET1_PATHS.balance, method('balance'), async (request) => ({
    ...accountOf(request).balance,
    cashbacks: [],
  }));

  /** The campaign of an `id` query parameter (400 `{error}` as the document's examples). */
  const campaignOf = (request: FastifyRequest) => {
    const id = optionalInteger(queryOf(request).id, 'id', NaN, () =>
      advError(400, 'Invalid Advert: invalid advert'),
    );
    const campaign = accountOf(request).campaigns.get(id);
    if (!campaign) throw advError(400, 'AdvertChangeStatus: Not Found: advert not found');
    return campaign;
  };

  const changeStatus =
    (from: number[], to: number) => async (request: FastifyRequest, reply: FastifyReply) => {
      const campaign = campaignOf(request);
      // The document's 422 is a plain-text sentence.
      const refuse = (why: string) =>
        new WireError(
          422,
          `Статус кампании не изменен: ${why} (campaign ${campaign.advertId}, status ${campaign.status})`,
          true,
        );
      if (!from.includes(campaign.status))
        throw refuse('the campaign is not in a status this method changes');
      if (to === 9 && campaign.status === 4 && campaign.budget <= 0)
        throw refuse('the campaign has no budget');
      const now = Date.now();
      const open = campaign.periods.find(([, until]) => until === null);
      if (to === 9) {
        campaign.periods.push([dayOf(now), null]);
        campaign.startTime = now;
      } else if (open) open[1] = dayOf(now);
      if (to === 7) campaign.endTime = now;
      campaign.status = to;
      campaign.changeTime = now;
      return reply.code(200).send();
    };
  app.get(MARKET1_PATHS.start, method('start'), changeStatus([4, 11], 9));
  app.get(MARKET1_PATHS.pause, method('pause'), changeStatus([9], 11));
  app.get(MARKET1_PATHS.stop, method('stop'), changeStatus([4, 9, 11], 7));

  app.post(MARKET1_PATHS.create, method('create'), async (request, reply) => {
    const body = request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw stringError('Некорректное тело запроса');
    const {
      name,
      nms,
      bid_type: bidType = 'manual',
      payment_type: paymentType = 'cpm',
    } = body as Record<string, unknown>;
    const placements = (body as Record<string, unknown>).placement_types ?? ['search'];
    const account = accountOf(request);
    if (typeof name !== 'string' || name.trim() === '' || name.length > MARKET1_LIMITS.campaignNameLength)
      throw stringError('Некорректное название');
    if (bidType !== 'manual' && bidType !== 'unified') throw stringError('Некорректный тип ставки');
    if (paymentType !== 'cpm' && paymentType !== 'cpc') throw stringError('Некорректный тип оплаты');
    if (
      !Array.isArray(placements) ||
      placements.length === 0 ||
      placements.some((placement) => placement !== 'search' && placement !== 'recommendations')
    )
      throw stringError('Некорректные места размещения');
    if (!Array.isArray(nms) || nms.length === 0 || nms.length > MARKET1_LIMITS.productsPerCampaign)
      throw stringError(`Укажите от 1 до ${MARKET1_LIMITS.productsPerCampaign} товаров`);
    const products = nms.map((nm) => {
      const product = typeof nm === 'number' ? account.products.get(nm) : undefined;
      if (!product) throw stringError(`Товар ${String(nm)} не найден у продавца`);
      return product;
    });
    const manual = bidType === 'manual';
    const now = Date.now();
    const advertId = account.nextCampaignId;
    account.nextCampaignId += 1;
    account.campaigns.set(advertId, {
      advertId,
      name: name.trim(),
      type: 9,
      bidType,
      status: 4,
      createTime: now,
      changeTime: now,
      startTime: null,
      endTime: null,
      budget: 0,
      paymentType,
      bid: paymentType === 'cpc' ? 5 : manual ? 250 : 150,
      subjectId: products[0]!.subjectId,
      nms: [...new Set(products.map((product) => product.nmId))].sort((a, b) => a - b),
      periods: [],
      reach: manual ? 800 : 500,
      clickRatio: manual ? 0.04 : 0.03,
    });
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(advertId));
  });

  app.post(MARKET1_PATHS.budgetDeposit, method('budgetDeposit'), async (request) => {
    const campaign = campaignOf(request);
    // The document tops up a campaign in status 11 (paused) only, and answers 400 `{error}` otherwise (P177).
    if (campaign.status !== 11)
      throw advError(
        400,
        `Invalid Params: the budget of campaign ${campaign.advertId} in status ${campaign.status} cannot be topped up: only a campaign in status 11 (paused)`,
      );
    const body = (request.body ?? {}) as Partial<Record<keyof WireBudgetDeposit, unknown>>;
    const sum = integer(body.sum, 'sum', () => advError(400, 'Invalid Params: invalid payload body'));
    const source = writeOffTypeOf(Number(body.type ?? 0));
    if (sum <= 0 || !source) throw advError(400, 'Invalid Params: invalid payload body');
    // The document's examples of refused amounts.
    if (sum < 1000) throw advError(400, 'Минимальная сумма пополнения 1000 рублей');
    if (sum % 50 !== 0) throw advError(400, 'Сумма пополнения должна быть кратна 50 руб');
    const account = accountOf(request);
    const field = ({ BALANCE: 'balance', NET: 'net', BONUS: 'bonus' } as const)[source];
    if (account.balance[field] < sum) throw advError(400, `insufficient funds: ${field} is below ${sum}`);
    account.balance[field] -= sum;
    campaign.budget += sum;
    campaign.changeTime = Date.now();
    return { total: campaign.budget };
  });

  // ---- Content and tariffs ---------------------------------------------------------------------------------

  app.get(MARKET1_PATHS.subjects, method('content'), async (request) => {
    const query = request.query as Record<string, string | undefined>;
    const limit = optionalInteger(query.limit, 'limit', 30, contentError);
    const offset = optionalInteger(query.offset, 'offset', 0, contentError);
    if (limit < 1 || limit > MARKET1_LIMITS.subjectsPerRequest || offset < 0)
      throw contentError(`limit is 1 to ${MARKET1_LIMITS.subjectsPerRequest}, offset at least 0`);
    const name = (query.name ?? '').toLowerCase();
    const parentId = optionalInteger(query.parentID, 'parentID', NaN, contentError);
    return envelope(
      SANDBOX_SUBJECTS.filter((subject) => subject.name.toLowerCase().includes(name))
        .filter((subject) => Number.isNaN(parentId) || subject.parentId === parentId)
        .slice(offset, offset + limit)
        .map((subject) => ({
          subjectID: subject.id,
          parentID: subject.parentId,
          subjectName: subject.name,
          parentName: subject.parentName,
        })),
    );
  });

  app.get(MARKET1_PATHS.parentCategories, method('content'), async () =>
    envelope(SANDBOX_PARENTS.map((parent) => ({ ...parent, isVisible: true }))),
  );

  app.get(`${MARKET1_PATHS.characteristics}/:subjectId`, method('content'), async (request) => {
    const { subjectId } = request.params as { subjectId: string };
    const subject = findSubject(integer(subjectId, 'subjectId', contentError));
    const characteristics: WireCharacteristic[] = (subject?.characteristics ?? []).map((charc) => ({
      charcID: charc.id,
      subjectName: subject!.name,
      subjectID: subject!.id,
      name: charc.name,
      required: charc.required,
      unitName: charc.unitName,
      maxCount: charc.maxCount,
      popular: charc.popular,
      charcType: charc.charcType,
    }));
    return envelope(characteristics);
  });

  // The published directories of values (P178); `locale` is accepted and, as in the marketplace's own sandbox,
  // not used.
  for (const [directory, path] of Object.entries(MARKET1_DIRECTORY_PATHS))
    app.get(path, method('content'), async () => envelope(SANDBOX_DIRECTORIES[directory as DirectoryName]));

  app.get(MARKET1_PATHS.commissions, method('tariffs'), async (): Promise<WireCommissionReport> => ({
    report: SANDBOX_SUBJECTS.map((subject) => ({
      ...subject.commissions,
      parentID: subject.parentId,
      parentName: subject.parentName,
      subjectID: subject.id,
      subjectName: subject.name,
    })),
  }));

  // ---- Control API -----------------------------------------------------------------------------------------

  app.post('/__sandbox/reset', async (_request, reply) => {
    state.reset();
    return reply.code(204).send();
  });
  app.post('/__sandbox/faults', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const mode = String(body.mode);
    if (!['401', '403', '429', '5xx', 'slow'].includes(mode))
      throw advError(400, 'mode is one of 401, 403, 429, 5xx, slow');
    const number = (name: string, fallback: number) =>
      optionalInteger(body[name], name, fallback, (message) => advError(400, message));
    state.faults.push({
      mode: mode as SandboxFault['mode'],
      count: number('count', 1),
      delayMs: number('delayMs', 2000),
      retryAfterSeconds: number('retryAfterSeconds', 1),
      status: number('status', 503),
      ...(typeof body.apiKey === 'string' && { apiKey: body.apiKey }),
      ...(typeof body.path === 'string' && { path: body.path }),
    });
    return reply.code(204).send();
  });
  app.delete('/__sandbox/faults', async (_request, reply) => {
    state.faults = [];
    return reply.code(204).send();
  });
  app.post('/__sandbox/revoke', async (request, reply) => {
    const { apiKey } = (request.body ?? {}) as { apiKey?: unknown };
    if (typeof apiKey !== 'string' || apiKey === '') throw advError(400, 'apiKey is required');
    state.revoked.add(keyFingerprint(apiKey));
    return reply.code(204).send();
  });
  app.post('/__sandbox/rate-limits', async (request, reply) => {
    const { mode, scale } = (request.body ?? {}) as { mode?: unknown; scale?: unknown };
    if (mode === 'real' || mode === 'off') state.rateLimits = mode;
    else if (mode === 'scaled' && typeof scale === 'number' && scale > 0) state.rateLimits = { scale };
    else throw advError(400, 'mode is real, off, or scaled with a positive scale');
    state.buckets.clear();
    return reply.code(204).send();
  });
  app.get('/__sandbox/requests', async () => ({ requests: state.requests }));
  // What the seller does in the marketplace's cabinet before a new campaign can start (the start's conditions
  // in the document): set its budget and apply the changes (P177).
  app.post('/__sandbox/budget', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    if (typeof body.apiKey !== 'string' || body.apiKey === '') throw advError(400, 'apiKey is required');
    const fail = (message: string) => advError(400, message);
    const id = integer(body.id, 'id', fail);
    const sum = integer(body.sum, 'sum', fail);
    const campaign = state.account(keyFingerprint(body.apiKey)).campaigns.get(id);
    if (!campaign) throw advError(400, `campaign ${id} is not an account's campaign`);
    if (sum <= 0) throw advError(400, 'sum must be positive');
    campaign.budget = sum;
    campaign.changeTime = Date.now();
    return reply.code(204).send();
  });

  return { app, close: () => app.close() };
}

/** Window scale of the rate limits of the sandbox the service and `npm run sandbox` serve (P96). */
export const SERVED_RATE_LIMIT_SCALE = 0.01;

/**
 * Builds the sandbox the service and `npm run sandbox` serve (`src/connectors/sandboxes.ts` lists it as `market1`):
 * the published limits with windows × 0.01 (statistics once per 0.6 s instead of per minute), so an import on a
 * first `npm start` takes seconds, not minutes.
 */
export const buildServedMarket1Sandbox = (): SandboxApp =>
  buildMarket1Sandbox({ rateLimits: { scale: SERVED_RATE_LIMIT_SCALE } });
