/**
 * What both cash-register sandboxes share (spec §4.3, P77): any login and password make an account, the
 * in-memory ledger of the receipts they registered (idempotent by external id, processed asynchronously, fiscalised at most once), the
 * fault control the tests use, the receipt check page, and the Fastify server they run on (loopback only).
 *
 * Control API (no authentication; loopback sandboxes only):
 * - `POST /__sandbox/faults` `{mode, operations?, count?, delayMs?, message?}`: from now on, requests of the
 *   given operations (`register`, `status`; default both) are answered with the fault, `count` times (default:
 *   until cleared). Modes: `reject` (registration refused), `fail` (accepted, then fiscalisation fails),
 *   `cancel` (accepted, then cancelled; provider B only), `delay` (processed, answer held `delayMs`),
 *   `timeout` (processed, never answered), `error5xx` (503, nothing processed), `credentials` (the provider
 *   refuses the login and password, whatever they are, as its protocol does; `operations` does not apply).
 * - `DELETE /__sandbox/faults`: normal answers again.
 * - `POST /__sandbox/settings` `{processingMs?, tokenTtlMs?}`: fiscalisation time and token lifetime.
 * - `GET /__sandbox/receipts`: every registered receipt with its registration and fiscalisation counts.
 * - `GET /__sandbox/tokens` (provider A): tokens issued and requests refused for their token.
 * - `GET /__sandbox/exchanges`: the last 500 protocol exchanges, oldest first: `{method, url, request, status,
 *   answer}` with the request body as received and the answer as sent (parsed when JSON), so a test can check
 *   both against the provider's published protocol.
 * - `GET /receipt/{id}`: the fiscal document of a completed receipt (the `fnsUrl` of sandbox receipts).
 */
import { createHash, randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { SandboxApp } from '../sandboxes.ts';

/** The fault modes of the control API. */
export const FAULT_MODES = [
  'reject',
  'fail',
  'cancel',
  'delay',
  'timeout',
  'error5xx',
  'credentials',
] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

/** The protocol operations a fault can apply to. */
export type SandboxOperation = 'register' | 'status';

/** An active fault. */
export interface Fault {
  mode: FaultMode;
  operations: SandboxOperation[];
  /** Requests still to answer with the fault; null = until cleared. */
  remaining: number | null;
  /** How long `delay` holds an answer, in ms. */
  delayMs: number;
  /** The provider's error text for `reject` and `fail`. */
  message: string;
}

/** How a registered receipt ends. */
export type DocumentState = 'processing' | 'done' | 'failed' | 'cancelled';

/** The fiscal attributes the sandbox gives a completed receipt. */
export interface SandboxFiscal {
  fiscalDocumentNumber: number;
  fiscalDocumentAttribute: string;
  fiscalStorageNumber: string;
  shiftNumber: number;
  registeredAt: Date;
}

/** A receipt the sandbox registered. */
export interface SandboxDocument {
  /** The login it was registered with. */
  account: string;
  externalId: string;
  /** The provider's id (a UUID). */
  id: string;
  /** The provider's operation (`sell`, `Income`, …). */
  operation: string;
  /** Provider B's `TaxationSystem` as received. */
  taxationSystem?: number;
  /** The lines as received. */
  items: unknown[];
  /** Total in kopecks. */
  total: number;
  state: DocumentState;
  error: string | null;
  /** Registration requests received with this external id (a resend counts). */
  registrations: number;
  /** Times it was fiscalised: 0 or 1. */
  fiscalisations: number;
  fiscal: SandboxFiscal | null;
  receivedAt: Date;
}

/** The fiscal storage number of every sandbox receipt (a test fiscal storage). */
const FISCAL_STORAGE_NUMBER = '9999078902004563';

/** The in-memory state of one sandbox. */
export class SandboxLedger {
  /** Time a receipt takes to be fiscalised, in ms. */
  processingMs = 300;
  /** Lifetime of an access token, in ms (provider A; 24 h like the real one). */
  tokenTtlMs = 24 * 60 * 60 * 1000;
  private fault: Fault | undefined;
  private readonly documents = new Map<string, SandboxDocument>();
  private readonly byId = new Map<string, SandboxDocument>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly holds = new Set<() => void>();
  private documentNumber = 0;

  constructor(
    /** The fault modes this provider supports. */
    readonly modes: readonly FaultMode[],
  ) {}

  /** Sets the fault (validated by the control route). */
  setFault(fault: Fault | undefined): void {
    this.fault = fault;
  }

  /**
   * Whether the `credentials` fault refuses this request's login and password; `count` counts the refusal (a
   * check that only decides whether to ask for credentials again does not).
   */
  refusesCredentials(count = true): boolean {
    const fault = this.fault;
    if (fault?.mode !== 'credentials') return false;
    if (count && fault.remaining !== null && --fault.remaining <= 0) this.fault = undefined;
    return true;
  }

  /** The fault that applies to one request of `operation`, counting it; undefined = answer normally. */
  takeFault(operation: SandboxOperation): Fault | undefined {
    const fault = this.fault;
    if (!fault || fault.mode === 'credentials' || !fault.operations.includes(operation)) return undefined;
    if (fault.remaining !== null && --fault.remaining <= 0) this.fault = undefined;
    return fault;
  }

  /**
   * Registers a receipt of `account` unless one with `externalId` exists (idempotency by external id); a new one
   * is processed after `processingMs` and ends `done`, or as `ending` says (a `fail` or `cancel` fault).
   * @returns the receipt and whether this call created it
   */
  register(
    account: string,
    externalId: string,
    values: { operation: string; items: unknown[]; total: number; taxationSystem?: number },
    ending: { state: 'done' } | { state: 'failed' | 'cancelled'; error: string } = { state: 'done' },
  ): { document: SandboxDocument; created: boolean } {
    const key = `${account}\n${externalId}`;
    const existing = this.documents.get(key);
    if (existing) {
      existing.registrations += 1;
      return { document: existing, created: false };
    }
    const document: SandboxDocument = {
      account,
      externalId,
      id: randomUUID(),
      ...values,
      state: 'processing',
      error: null,
      registrations: 1,
      fiscalisations: 0,
      fiscal: null,
      receivedAt: new Date(),
    };
    this.documents.set(key, document);
    this.byId.set(document.id, document);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (ending.state === 'done') this.fiscalise(document);
      else {
        document.state = ending.state;
        document.error = ending.error;
      }
    }, this.processingMs);
    this.timers.add(timer);
    return { document, created: true };
  }

  /** The receipt of `account` with the provider id `id`. */
  find(account: string, id: string): SandboxDocument | undefined {
    const document = this.byId.get(id);
    return document?.account === account ? document : undefined;
  }

  /** A completed receipt by provider id, any account (the check page). */
  completed(id: string): SandboxDocument | undefined {
    const document = this.byId.get(id);
    return document?.state === 'done' ? document : undefined;
  }

  /** Every registered receipt, oldest first. */
  list(): SandboxDocument[] {
    return [...this.documents.values()];
  }

  /** Waits `ms` (Infinity = until the sandbox closes). */
  hold(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const release = () => {
        this.holds.delete(release);
        clearTimeout(timer);
        resolve();
      };
      const timer = Number.isFinite(ms) ? setTimeout(release, ms) : undefined;
      this.holds.add(release);
    });
  }

  /** Stops processing and releases held answers. */
  close(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const release of [...this.holds]) release();
  }

  private fiscalise(document: SandboxDocument): void {
    this.documentNumber += 1;
    const attribute = createHash('sha256').update(`${document.id}:${this.documentNumber}`).digest();
    document.state = 'done';
    document.fiscalisations += 1;
    document.fiscal = {
      fiscalDocumentNumber: this.documentNumber,
      // ФПД: a number of up to 10 digits derived from the document.
      fiscalDocumentAttribute: String(attribute.readUInt32BE(0)),
      fiscalStorageNumber: FISCAL_STORAGE_NUMBER,
      shiftNumber: 1,
      registeredAt: new Date(),
    };
  }
}

/** Kopecks of a JSON amount in rubles; undefined when it is not a finite number ≥ 0 with at most 2 decimals. */
export function kopecksOf(value: unknown): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return undefined;
  const minor = Math.round(value * 100);
  return Math.abs(minor - value * 100) < 1e-6 ? minor : undefined;
}

/** The `fnsUrl` of a sandbox receipt: its check page on the sandbox that registered it. */
export function checkPageUrl(request: FastifyRequest, id: string): string {
  return `${request.protocol}://${request.host}/receipt/${id}`;
}

/** The wait a fault imposes on an answer (after the request was processed): `delay` and `timeout`. */
export async function holdForFault(ledger: SandboxLedger, fault: Fault | undefined): Promise<void> {
  if (fault?.mode === 'delay') await ledger.hold(fault.delayMs);
  if (fault?.mode === 'timeout') await ledger.hold(Number.POSITIVE_INFINITY);
}

/** One protocol exchange as the sandbox saw it (`GET /__sandbox/exchanges`). */
export interface SandboxExchange {
  method: string;
  url: string;
  /** The parsed request body (undefined without one). */
  request: unknown;
  status: number;
  /** The answer body, parsed when it is JSON. */
  answer: unknown;
}

/** How many exchanges the log keeps. */
const EXCHANGE_LOG_SIZE = 500;

/** Records every protocol exchange of `app` (not the control API or check page) in `log`. */
function recordExchanges(app: FastifyInstance, log: SandboxExchange[]): void {
  app.addHook('onSend', async (request, reply, payload) => {
    if (request.url.startsWith('/__sandbox/') || request.url.startsWith('/receipt/')) return payload;
    const body = typeof payload === 'string' ? payload : '';
    let answer: unknown = body;
    if (/json/i.test(String(reply.getHeader('content-type') ?? '')))
      try {
        answer = JSON.parse(body);
      } catch {
        answer = body;
      }
    log.push({
      method: request.method,
      url: request.url,
      request: request.body,
      status: reply.statusCode,
      answer,
    });
    if (log.length > EXCHANGE_LOG_SIZE) log.shift();
    return payload;
  });
}

/** Registers the control API and the check page of `ledger` on `app`. */
function controlRoutes(app: FastifyInstance, ledger: SandboxLedger): void {
  const exchanges: SandboxExchange[] = [];
  recordExchanges(app, exchanges);
  app.get('/__sandbox/exchanges', async () => ({ exchanges }));
  app.post('/__sandbox/faults', async (request, reply) => {
    const body = (request.body ?? {}) as Partial<Fault> & { count?: number };
    if (!body.mode || !ledger.modes.includes(body.mode))
      return reply.code(400).send({ error: `mode must be one of ${ledger.modes.join(', ')}` });
    const fault: Fault = {
      mode: body.mode,
      operations: body.operations ?? ['register', 'status'],
      remaining: body.count ?? null,
      delayMs: body.delayMs ?? 30_000,
      message: body.message ?? 'the receipt was refused by the sandbox',
    };
    ledger.setFault(fault);
    return fault;
  });
  app.delete('/__sandbox/faults', async () => {
    ledger.setFault(undefined);
    return { fault: null };
  });
  app.post('/__sandbox/settings', async (request) => {
    const body = (request.body ?? {}) as { processingMs?: number; tokenTtlMs?: number };
    if (typeof body.processingMs === 'number') ledger.processingMs = body.processingMs;
    if (typeof body.tokenTtlMs === 'number') ledger.tokenTtlMs = body.tokenTtlMs;
    return { processingMs: ledger.processingMs, tokenTtlMs: ledger.tokenTtlMs };
  });
  app.get('/__sandbox/receipts', async () => ({ receipts: ledger.list() }));
  app.get('/receipt/:id', async (request, reply) => {
    const document = ledger.completed((request.params as { id: string }).id);
    if (!document) return reply.code(404).send({ error: 'no completed receipt with this id' });
    return {
      id: document.id,
      operation: document.operation,
      total: document.total / 100,
      items: document.items,
      ...document.fiscal,
    };
  });
}

/** A sandbox's Fastify app with the control API mounted; the provider routes are added by `routes`. */
export function buildSandboxApp(options: {
  ledger: SandboxLedger;
  routes: (app: FastifyInstance) => void;
}): SandboxApp {
  const app = Fastify({ logger: false });
  controlRoutes(app, options.ledger);
  options.routes(app);
  return {
    app,
    close: async () => {
      options.ledger.close();
      await app.close();
    },
  };
}
