/**
 * The Market1 sandbox (P94–P96): a Fastify server that speaks the marketplace's promotion, content and tariff
 * protocol (`protocol.ts`, docs/market1.md) over the deterministic data of `sandbox-data.ts`, for the tests,
 * `npm run sandbox` (port 8093) and the embedded default when `MARKET1_API_URL` is unset.
 *
 * - Credentials: any non-empty `Authorization` value is an API key (a `Bearer ` prefix is ignored) with its own
 *   account, except keys revoked through the control API (401); keys starting with `readonly-` may read but
 *   not change anything (403), like the marketplace's read-only tokens.
 * - Rate limits: the marketplace's published limits (`MARKET1_RATE_LIMITS`) per key and method group, through
 *   `@fastify/rate-limit`; beyond them 429 with `Retry-After` and `X-Ratelimit-Retry`. `rateLimits` (option or
 *   control API) turns them off or scales their windows so tests stay fast.
 * - State changes (start, pause, stop, create) live in memory per key until `POST /__sandbox/reset`.
 * - Control API under `/__sandbox/` (no key, no limits): faults (401, 403, 429, 5xx, slow answers), key
 *   revocation, rate-limit settings, the log of recent requests, reset.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { SandboxDefinition, SandboxServer } from '../sandboxes.ts';
import {
  MARKET1_LIMITS,
  MARKET1_PATHS,
  MARKET1_RATE_LIMITS,
  type RateLimitGroup,
  type WireCampaignCount,
  type WireCampaignStatistics,
  type WireCharacteristic,
  type WireCommissionReport,
  type WireContentEnvelope,
} from './protocol.ts';
import {
  dayOf,
  findCharacteristic,
  findSubject,
  generateAccount,
  renderCampaign,
  renderStatistics,
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
  /** The published limits with every window multiplied by `scale` (e.g. 0.01: a 1-minute window lasts 0.6 s). */
  | { scale: number };

/** Settings of a sandbox. */
export interface Market1SandboxOptions {
  host: string;
  /** 0 = any free port. */
  port: number;
  /** Default `real`. */
  rateLimits?: SandboxRateLimits;
}

/** A fault the sandbox injects into the next `count` matching requests (`POST /__sandbox/faults`). */
export interface SandboxFault {
  /** 401/403: the auth answers; 429: throttled with `retryAfterSeconds`; 5xx: `status` (503); slow: `delayMs`. */
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
  /** Items of a JSON array body (ids, statistics items). */
  items?: number;
}

/** The sandbox's fingerprint of an API key: the first 16 hex digits of its SHA-256. */
export function keyFingerprint(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex').slice(0, 16);
}

const MAX_ACCOUNTS = 1000;
const MAX_LOGGED_REQUESTS = 2000;
const DAY_MS = 86_400_000;

/** A marketplace error answer: thrown by handlers, rendered by the error handler. */
class WireError extends Error {
  constructor(
    readonly statusCode: number,
    readonly body: unknown,
  ) {
    super(`HTTP ${statusCode}`);
  }
}

/** The promotion API's error body `{error}`. */
const advError = (status: number, message: string) => new WireError(status, { error: message });

/** The content API's error envelope. */
const contentError = (message: string) =>
  new WireError(400, { data: null, error: true, errorText: message, additionalErrors: null });

/** The gateway's problem body (401, 403, 404, 429, 5xx). */
function problem(status: number, title: string, detail: string) {
  return new WireError(status, {
    title,
    detail,
    status,
    statusText: title,
    origin: 's2s-api-gateway',
    timestamp: new Date().toISOString(),
  });
}

const envelope = <T>(data: T): WireContentEnvelope<T> => ({
  data,
  error: false,
  errorText: '',
  additionalErrors: null,
});

class SandboxState {
  accounts = new Map<string, SandboxAccount>();
  revoked = new Set<string>();
  faults: SandboxFault[] = [];
  requests: SandboxRequestLog[] = [];
  rateLimits: SandboxRateLimits;
  /** Part of every rate-limit key: a reset starts fresh counters. */
  generation = 0;

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

  reset(): void {
    this.accounts.clear();
    this.revoked.clear();
    this.faults = [];
    this.requests = [];
    this.generation += 1;
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

function parseDay(value: unknown, name: string): number {
  const time =
    typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : NaN;
  if (!Number.isFinite(time)) throw advError(400, `${name}: a date YYYY-MM-DD is required`);
  return time;
}

/**
 * Starts a sandbox and resolves once it listens.
 * @throws Error when the port is taken
 */
export async function startMarket1Sandbox(options: Market1SandboxOptions): Promise<SandboxServer> {
  const state = new SandboxState(options.rateLimits ?? 'real');
  const app = Fastify({ logger: false, bodyLimit: 5 * 1024 * 1024 });

  app.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
    if (error instanceof WireError) return reply.code(error.statusCode).send(error.body);
    if (error.statusCode === 429) {
      const retryAfter = reply.getHeader('retry-after');
      if (retryAfter !== undefined) reply.header('x-ratelimit-retry', retryAfter);
      return reply
        .code(429)
        .send(problem(429, 'too many requests', 'limited by the method group rate limit').body);
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
    if (request.url.startsWith('/__sandbox/')) return;
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
  app.addHook('onResponse', async (request, reply) => {
    if (request.url.startsWith('/__sandbox/')) return;
    const [path, query = ''] = request.url.split('?') as [string, string?];
    state.requests.push({
      method: request.method,
      path,
      query,
      status: reply.statusCode,
      key: keyFingerprint(apiKeyOf(request)),
      ...(Array.isArray(request.body) && { items: request.body.length }),
    });
    if (state.requests.length > MAX_LOGGED_REQUESTS) state.requests.shift();
  });

  await app.register(rateLimit, {
    global: false,
    keyGenerator: (request) => `${state.generation}:${keyFingerprint(apiKeyOf(request))}`,
    errorResponseBuilder: (_request, context) =>
      Object.assign(new Error('too many requests'), { statusCode: context.statusCode }),
  });

  /** Route options of a marketplace method: its rate-limit group and whether it changes anything. */
  const method = (group: RateLimitGroup, mutation = false) => ({
    config: {
      rateLimit: {
        groupId: group,
        max: () => MARKET1_RATE_LIMITS[group].max,
        timeWindow: () => {
          const limits = state.rateLimits;
          const scale = typeof limits === 'object' ? limits.scale : 1;
          return Math.max(1, Math.round(MARKET1_RATE_LIMITS[group].windowMs * scale));
        },
        allowList: () => state.rateLimits === 'off',
      },
    },
    preHandler: async (request: FastifyRequest) => {
      const key = apiKeyOf(request);
      if (key === '') throw problem(401, 'unauthorized', 'empty Authorization header');
      if (state.revoked.has(keyFingerprint(key))) throw problem(401, 'unauthorized', 'token is revoked');
      if (mutation && key.startsWith('readonly-'))
        throw problem(403, 'forbidden', 'read-only token scope not allowed for this route');
    },
  });
  const accountOf = (request: FastifyRequest) => state.account(keyFingerprint(apiKeyOf(request)));

  // ---- Promotion -------------------------------------------------------------------------------------------

  app.get(MARKET1_PATHS.campaignCount, method('campaigns'), async (request): Promise<WireCampaignCount> => {
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
        changeTime: new Date(campaign.changeTime).toISOString(),
      })),
    }));
    return { adverts, all: accountOf(request).campaigns.size };
  });

  app.post(MARKET1_PATHS.campaignDetails, method('campaigns'), async (request) => {
    const ids = request.body;
    if (!Array.isArray(ids) || ids.length === 0)
      throw advError(400, 'a JSON array of campaign ids is required');
    if (ids.length > MARKET1_LIMITS.campaignIdsPerDetailsRequest)
      throw advError(400, `at most ${MARKET1_LIMITS.campaignIdsPerDetailsRequest} campaign ids per request`);
    const query = request.query as Record<string, string | undefined>;
    const status = optionalInteger(query.status, 'status', NaN, (message) => advError(400, message));
    const type = optionalInteger(query.type, 'type', NaN, (message) => advError(400, message));
    const { campaigns } = accountOf(request);
    const found = ids
      .map((id) => campaigns.get(integer(id, 'id', (message) => advError(400, message))))
      .filter((campaign): campaign is SandboxCampaign => campaign !== undefined)
      .filter((campaign) => Number.isNaN(status) || campaign.status === status)
      .filter((campaign) => Number.isNaN(type) || campaign.type === type);
    const order =
      query.order === 'create' ? 'createTime' : query.order === 'change' ? 'changeTime' : 'advertId';
    const direction = query.direction === 'desc' ? -1 : 1;
    return found.sort((a, b) => (a[order] - b[order]) * direction).map(renderCampaign);
  });

  app.post(MARKET1_PATHS.fullStatistics, method('statistics'), async (request) => {
    const items = request.body;
    if (!Array.isArray(items) || items.length === 0)
      throw advError(400, 'a JSON array of {id, interval} is required');
    if (items.length > MARKET1_LIMITS.campaignsPerStatisticsRequest)
      throw advError(400, `at most ${MARKET1_LIMITS.campaignsPerStatisticsRequest} campaigns per request`);
    const account = accountOf(request);
    const today = dayOf(Date.now());
    const answer: WireCampaignStatistics[] = [];
    for (const item of items as { id?: unknown; interval?: { begin?: unknown; end?: unknown } }[]) {
      const id = integer(item?.id, 'id', (message) => advError(400, message));
      let begin = today;
      let end = today;
      if (item.interval !== undefined) {
        begin = parseDay(item.interval?.begin, 'interval.begin');
        end = parseDay(item.interval?.end, 'interval.end');
        if (begin > end) throw advError(400, 'interval.begin is after interval.end');
        if ((end - begin) / DAY_MS + 1 > MARKET1_LIMITS.daysPerStatisticsInterval)
          throw advError(400, `an interval spans at most ${MARKET1_LIMITS.daysPerStatisticsInterval} days`);
      }
      const campaign = account.campaigns.get(id);
      const statistics = campaign && renderStatistics(account, campaign, begin, end);
      if (statistics) answer.push(statistics);
    }
    return answer;
  });

  app.get(MARKET1_PATHS.balance, method('balance'), async (request) => accountOf(request).balance);

  const changeStatus =
    (from: number[], to: number) => async (request: FastifyRequest, reply: FastifyReply) => {
      const query = request.query as Record<string, string | undefined>;
      const id = optionalInteger(query.id, 'id', NaN, () => advError(400, 'invalid campaign id'));
      const campaign = accountOf(request).campaigns.get(id);
      if (!campaign) throw advError(400, 'invalid campaign id');
      if (!from.includes(campaign.status))
        throw advError(422, `status not changed: campaign ${id} is in status ${campaign.status}`);
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
  app.get(MARKET1_PATHS.start, method('status', true), changeStatus([4, 11], 9));
  app.get(MARKET1_PATHS.pause, method('status', true), changeStatus([9], 11));
  app.get(MARKET1_PATHS.stop, method('status', true), changeStatus([4, 9, 11], 7));

  /** Checks a new campaign's name and products; returns the products' subject. */
  const checkNewCampaign = (account: SandboxAccount, name: unknown, nms: unknown, maxProducts: number) => {
    if (typeof name !== 'string' || name.trim() === '' || name.length > MARKET1_LIMITS.campaignNameLength)
      throw advError(400, `the campaign name must have 1 to ${MARKET1_LIMITS.campaignNameLength} characters`);
    if (!Array.isArray(nms) || nms.length === 0 || nms.length > maxProducts)
      throw advError(400, `nms must list 1 to ${maxProducts} products`);
    const products = nms.map((nm) => {
      const product = account.products.get(integer(nm, 'nms', (message) => advError(400, message)));
      if (!product) throw advError(400, `product ${String(nm)} is not the seller's`);
      return product;
    });
    return { name: name.trim(), products };
  };
  const addCampaign = (account: SandboxAccount, campaign: Omit<SandboxCampaign, 'advertId'>) => {
    const advertId = account.nextCampaignId;
    account.nextCampaignId += 1;
    account.campaigns.set(advertId, { ...campaign, advertId });
    return advertId;
  };

  app.post(MARKET1_PATHS.createAuto, method('createAuto', true), async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const account = accountOf(request);
    if (body.type !== 8) throw advError(400, 'type must be 8 (automatic campaign)');
    const { name, products } = checkNewCampaign(
      account,
      body.name,
      body.nms,
      MARKET1_LIMITS.productsPerAutoCampaign,
    );
    const subjectId = integer(body.subjectId, 'subjectId', (message) => advError(400, message));
    if (!findSubject(subjectId)) throw advError(400, `unknown subject ${subjectId}`);
    if (products.some((product) => product.subjectId !== subjectId))
      throw advError(400, `every product must be of subject ${subjectId}`);
    const sum = integer(body.sum, 'sum', (message) => advError(400, message));
    if (sum < 500) throw advError(400, 'the budget top-up is at least 500 roubles');
    const source = ({ 0: 'balance', 1: 'net', 3: 'bonus' } as const)[Number(body.btype) as 0 | 1 | 3];
    if (!source) throw advError(400, 'btype must be 0 (account), 1 (balance) or 3 (bonuses)');
    if (typeof body.on_pause !== 'boolean') throw advError(400, 'on_pause must be a boolean');
    if (account.balance[source] < sum) throw advError(400, `insufficient funds: ${source} is below ${sum}`);
    const bid =
      body.cpm === undefined
        ? 150
        : Math.max(
            150,
            integer(body.cpm, 'cpm', (m) => advError(400, m)),
          );
    account.balance[source] -= sum;
    const now = Date.now();
    const advertId = addCampaign(account, {
      name,
      type: 8,
      status: body.on_pause ? 11 : 9,
      createTime: now,
      changeTime: now,
      startTime: body.on_pause ? null : now,
      endTime: null,
      dailyBudget: 0,
      paymentType: 'cpm',
      bid,
      subjectId,
      nms: products.map((product) => product.nmId).sort((a, b) => a - b),
      periods: body.on_pause ? [] : [[dayOf(now), null]],
      reach: 500,
      clickRatio: 0.03,
    });
    // The marketplace answers this method with the new id as a JSON string.
    return reply.type('application/json').send(JSON.stringify(String(advertId)));
  });

  app.post(MARKET1_PATHS.createAuction, method('createAuction', true), async (request) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const account = accountOf(request);
    const { name, products } = checkNewCampaign(
      account,
      body.campaignName,
      body.nms,
      MARKET1_LIMITS.productsPerAuctionCampaign,
    );
    const now = Date.now();
    const advertId = addCampaign(account, {
      name,
      type: 9,
      status: 4,
      createTime: now,
      changeTime: now,
      startTime: null,
      endTime: null,
      dailyBudget: 0,
      paymentType: 'cpm',
      bid: 250,
      subjectId: products[0]!.subjectId,
      nms: products.map((product) => product.nmId).sort((a, b) => a - b),
      periods: [],
      reach: 800,
      clickRatio: 0.04,
    });
    return advertId;
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
      hasDirectory: charc.values !== undefined,
    }));
    return envelope(characteristics);
  });

  app.get(MARKET1_PATHS.characteristicValues, method('content'), async (request) => {
    const query = request.query as Record<string, string | undefined>;
    const characteristic = findCharacteristic(integer(query.charcID, 'charcID', contentError));
    if (!characteristic?.values) throw contentError(`characteristic ${query.charcID} has no directory`);
    const limit = optionalInteger(query.limit, 'limit', 1000, contentError);
    const offset = optionalInteger(query.offset, 'offset', 0, contentError);
    if (limit < 1 || limit > 1000 || offset < 0) throw contentError('limit is 1 to 1000, offset at least 0');
    const name = (query.name ?? '').toLowerCase();
    return envelope(
      characteristic.values
        .filter((value) => value.name.toLowerCase().includes(name))
        .slice(offset, offset + limit),
    );
  });

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
    state.generation += 1;
    return reply.code(204).send();
  });
  app.get('/__sandbox/requests', async () => ({ requests: state.requests }));

  await app.listen({ host: options.host, port: options.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return { name: 'market1', url: `http://${host}:${port}`, close: () => app.close() };
}

/** Window scale of the rate limits of the sandbox the service and `npm run sandbox` serve (P96). */
export const SERVED_RATE_LIMIT_SCALE = 0.01;

/** The Market1 sandbox in the registry of `src/connectors/sandboxes.ts` (port 8093, `MARKET1_API_URL`). */
export const market1Sandbox: SandboxDefinition = {
  name: 'market1',
  urlSetting: 'market1ApiUrl',
  defaultPort: 8093,
  // Served by `npm run sandbox` and the embedded default: the published limits with windows × 0.01 (statistics
  // once per 0.6 s instead of per minute), so an import on a first `npm start` takes seconds, not minutes.
  start: ({ host, port }) =>
    startMarket1Sandbox({ host, port, rateLimits: { scale: SERVED_RATE_LIMIT_SCALE } }),
};
