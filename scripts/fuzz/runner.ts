/**
 * The fuzzing run (P140–P145): reads `/openapi.json`, creates the fuzzer's account, then
 * sends `requests` requests in rounds — each round every operation once, in an order and with plans drawn by
 * fast-check from the seed — and checks every answer (`response-check.ts`). Ids of successful answers feed
 * the pools later requests draw from, and the requests that earned them the corpus later requests start from. Requests are sent one at a time, so a seed replays the same run on a
 * fresh database.
 */
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import type { Runtime } from '../../src/runtime.ts';
import { createFuzzAccount, type FuzzAccount } from './fixture.ts';
import { Corpus, type RequestValues } from './corpus.ts';
import { buildRequest, mapIds, requestPlan, type FuzzRequest } from './generate.ts';
import { IdPools } from './id-pools.ts';
import {
  listOperations,
  type FuzzOperation,
  type OpenApiDocument,
  type SkippedOperation,
} from './openapi.ts';
import { parseBody, ResponseChecker, type FuzzResponse, type Violation } from './response-check.ts';

/** Options of `runFuzz`. */
export interface FuzzOptions {
  app: FastifyInstance;
  runtime: Runtime;
  /** Seed of every random choice (a 32-bit integer). */
  seed: number;
  /** How many requests to send (besides the fixture's). */
  requests: number;
  /** Receives a progress line now and then (e.g. `process.stderr`). */
  progress?: (line: string) => void;
}

/** A request whose answer broke a rule, as it can be replayed. */
export interface FuzzFailure {
  /** Position of the request in the run (0-based). */
  index: number;
  operation: string;
  variant: string;
  kind: Violation['kind'];
  message: string;
  request: { method: string; url: string; headers: Record<string, string>; payload?: string };
}

/** Counts of one operation. */
export interface OperationCounts {
  key: string;
  requests: number;
  /** Requests by answer status. */
  statuses: Record<string, number>;
}

/** What a run did and found. */
export interface FuzzReport {
  seed: number;
  requests: number;
  durationMs: number;
  operations: OperationCounts[];
  /** Requests by answer status, over all operations. */
  statuses: Record<string, number>;
  /** Requests by variant (`valid` or the mutation). */
  variants: Record<string, number>;
  /** Counts of broken rules by kind. */
  violations: Record<Violation['kind'], number>;
  /** The first broken rules (at most 50), for the report. */
  failures: FuzzFailure[];
  /** Operations the fuzzer does not send, with the reason. */
  skipped: SkippedOperation[];
  /** Sizes of the id pools at the end. */
  pools: Record<string, number>;
  /** How many operations had a successful request to start from at the end. */
  corpusOperations: number;
}

/** How long one answer may take before the request counts as unanswered. */
const ANSWER_TIMEOUT_MS = 30_000;
const MAX_FAILURES_KEPT = 50;

/** The seed of round `round` of a run with `seed` (each round is sampled on its own, so memory stays flat). */
const roundSeed = (seed: number, round: number) => (seed + Math.imul(round + 1, 0x9e3779b1)) | 0;

/**
 * Finds the operation a concrete request belongs to (static segments win over parameters) and reads its values
 * back (path parameters, query parameters, JSON body), so the fixture's requests seed the corpus.
 */
function requestReader(operations: FuzzOperation[]) {
  const patterns = operations
    .map((operation) => ({
      operation,
      names: [...operation.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? ''),
      pattern: new RegExp(`^${operation.path.replace(/\{\w+\}/g, '([^/]+)')}$`),
    }))
    .sort((a, b) => a.names.length - b.names.length);
  return (method: string, url: string, payload: string | undefined) => {
    const [pathname = '', search = ''] = url.split('?');
    for (const { operation, names, pattern } of patterns) {
      const match = operation.method === method ? pattern.exec(pathname) : null;
      if (!match) continue;
      const query: Record<string, unknown> = {};
      for (const [name, value] of new URLSearchParams(search)) {
        const previous = query[name];
        query[name] = previous === undefined ? value : [previous, value].flat();
      }
      const values: RequestValues = {
        path: Object.fromEntries(
          names.map((name, index) => [name, decodeURIComponent(match[index + 1] ?? '')]),
        ),
        query,
        header: {},
        ...(payload !== undefined && { body: parseBody(payload) }),
      };
      return { operation, values };
    }
    return undefined;
  };
}

/** Runs the fuzzer; see the module comment. */
export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const { app, runtime, seed } = options;
  const started = Date.now();
  const document = (await app.inject('/openapi.json')).json<OpenApiDocument>();
  const { operations, skipped } = listOperations(document);
  if (operations.length === 0) throw new Error('the OpenAPI document lists no operation');
  const checker = new ResponseChecker(document);
  const pools = new IdPools();
  const corpus = new Corpus();
  const readRequest = requestReader(operations);

  const exchange = async (request: Omit<FuzzRequest, 'variant'>) => {
    const response = await app.inject({
      method: request.method,
      url: request.url,
      headers: request.headers,
      ...(request.payload !== undefined && { payload: request.payload }),
    });
    return {
      statusCode: response.statusCode,
      headers: response.headers,
      body: response.body,
    } as FuzzResponse;
  };
  /** Takes the ids of a successful answer and keeps `values`, the unmutated request that earned it (P141, P142). */
  const learn = (operation: FuzzOperation, answer: FuzzResponse, values: RequestValues | undefined) => {
    if (answer.statusCode < 200 || answer.statusCode >= 300) return;
    if (values) corpus.add(operation.key, values);
    const pointer = operation.responses[String(answer.statusCode)]?.schemaPointer;
    if (pointer === undefined) return;
    const schema = pointer
      .slice(2)
      .split('/')
      .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce<unknown>((node, segment) => (node as Record<string, unknown> | undefined)?.[segment], document);
    pools.harvest(parseBody(answer.body), schema, document, operation.path);
  };

  /** Drops the ids a 404 names from the pools of the fields and parameters that carried them (P142). */
  const forgetMissing = (operation: FuzzOperation, values: RequestValues, answer: FuzzResponse) => {
    const params = (parseBody(answer.body) as { params?: { id?: unknown; ids?: unknown } } | undefined)
      ?.params;
    const ids: unknown[] = Array.isArray(params?.ids) ? params.ids : [];
    const missing = new Set([params?.id, ...ids].map(String));
    mapIds(values, operation, (id, stems) => {
      if (missing.has(String(id))) pools.forget(stems, Number(id));
      return id;
    });
  };

  const account: FuzzAccount = await createFuzzAccount(runtime, (token) => async (method, url, payload) => {
    const request = {
      method,
      url,
      headers: { authorization: token, ...(payload !== undefined && { 'content-type': 'application/json' }) },
      ...(payload !== undefined && { payload: JSON.stringify(payload) }),
    };
    const answer = await exchange(request);
    const read = readRequest(method, url, request.payload);
    if (read) learn(read.operation, answer, read.values);
    return { statusCode: answer.statusCode, body: parseBody(answer.body) };
  });
  for (const [pool, ids] of Object.entries(account.seededIds)) for (const id of ids) pools.add(pool, id);
  const context = {
    pools,
    corpus,
    writeToken: account.writeToken,
    readToken: account.readToken,
    bodyLimitBytes: runtime.config.bodyLimitBytes,
  };

  const counts = new Map<string, OperationCounts>(
    operations.map((operation) => [operation.key, { key: operation.key, requests: 0, statuses: {} }]),
  );
  const statuses: Record<string, number> = {};
  const variants: Record<string, number> = {};
  const violations: FuzzReport['violations'] = { '5xx': 0, 'outside-model': 0, 'no-answer': 0 };
  const failures: FuzzFailure[] = [];
  const increment = (record: Record<string, number>, key: string) =>
    void (record[key] = (record[key] ?? 0) + 1);
  const indices = operations.map((_operation, index) => index);
  const round = fc.tuple(
    fc.shuffledSubarray(indices, { minLength: indices.length, maxLength: indices.length }),
    fc.array(requestPlan, { minLength: indices.length, maxLength: indices.length }),
  );

  let sent = 0;
  for (let roundIndex = 0; sent < options.requests; roundIndex++) {
    const [order, plans] = fc.sample(round, { seed: roundSeed(seed, roundIndex), numRuns: 1 })[0] ?? [[], []];
    for (const [position, operationIndex] of order.entries()) {
      if (sent >= options.requests) break;
      const operation = operations[operationIndex];
      const plan = plans[position];
      if (operation === undefined || plan === undefined) throw new Error('fuzz round out of step');
      const { request, values } = buildRequest(operation, plan, context);
      let answer: FuzzResponse | undefined;
      let violation: Violation | undefined;
      try {
        answer = await withTimeout(exchange(request), ANSWER_TIMEOUT_MS);
        violation = checker.check(operation, answer);
        if (!violation) learn(operation, answer, request.variant === 'valid' ? values : undefined);
        if (answer.statusCode === 404) forgetMissing(operation, values, answer);
      } catch (error) {
        violation = { kind: 'no-answer', message: error instanceof Error ? error.message : String(error) };
      }
      const status = answer ? String(answer.statusCode) : 'none';
      const operationCounts = counts.get(operation.key);
      if (operationCounts) {
        operationCounts.requests++;
        increment(operationCounts.statuses, status);
      }
      increment(statuses, status);
      increment(variants, request.variant);
      if (violation) {
        violations[violation.kind]++;
        if (failures.length < MAX_FAILURES_KEPT)
          failures.push({
            index: sent,
            operation: operation.key,
            variant: request.variant,
            kind: violation.kind,
            message: violation.message,
            request: masked(request, account),
          });
      }
      sent++;
      if (sent % 1000 === 0) options.progress?.(`${sent} requests sent`);
    }
  }
  return {
    seed,
    requests: sent,
    durationMs: Date.now() - started,
    operations: [...counts.values()],
    statuses,
    variants,
    violations,
    failures,
    skipped,
    pools: pools.sizes(),
    corpusOperations: corpus.size,
  };
}

/** Rejects when `promise` has not settled within `ms`. */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The request as a failure shows it: tokens replaced by their role, long bodies cut. */
function masked(request: FuzzRequest, account: FuzzAccount): FuzzFailure['request'] {
  const headers = { ...request.headers };
  if (headers.authorization !== undefined)
    headers.authorization = headers.authorization
      .replace(account.writeToken, '<WRITE token>')
      .replace(account.readToken, '<READ token>');
  return {
    method: request.method,
    url: request.url.length > 2_000 ? `${request.url.slice(0, 2_000)}…` : request.url,
    headers,
    ...(request.payload !== undefined && {
      payload:
        request.payload.length > 2_000
          ? `${request.payload.slice(0, 2_000)}… (${request.payload.length} characters)`
          : request.payload,
    }),
  };
}
