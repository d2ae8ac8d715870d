/**
 * The sandbox of provider A (`cash-register-a`, port 8091 under `npm run sandbox`): speaks the protocol of
 * `protocol.ts` on loopback and answers as the document does (`document.ts`: its fields, error table and HTTP
 * statuses). Any login and password get a token valid for `tokenTtlMs` (24 h unless the control API changes it);
 * the `credentials` fault refuses them (error 12). A registration must conform to the document's fields (error 32
 * naming the first field that does not) and add up (price × quantity = sum, Σ sums = total = Σ payments); it is
 * registered once per login, group and external id — a repeat answers error 33 while the receipt is processed and
 * the first uuid afterwards — fiscalised after `processingMs` and reported with fiscal attributes and a check page
 * URL. A report in the first half of the processing answers error 34 (not ready), an unknown uuid error 30.
 * Fault control: `sandbox-kit.ts`.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxApp } from '../../sandboxes.ts';
import {
  checkPageUrl,
  holdForFault,
  kopecksOf,
  SandboxLedger,
  buildSandboxApp,
  type SandboxDocument,
} from '../sandbox-kit.ts';
import { registrationProblems, SERVICE_ERRORS } from './document.ts';
import {
  API_PREFIX,
  ERROR_CODES,
  formatTimestamp,
  OPERATIONS,
  type RegistrationBody,
  type ReportAnswer,
} from './protocol.ts';

const now = () => formatTimestamp(new Date());

/** The sandbox's one cash register (device) and its server. */
const DEVICE = { daemon_code: 'sandbox-agent-1', device_code: 'SANDBOX-1' };

/** An error answer of the service error table: `{error, timestamp}` plus `extra`, with the table's HTTP status. */
function sendError(reply: FastifyReply, code: number, text: string, extra: object = {}): FastifyReply {
  const row = SERVICE_ERRORS[code];
  if (!row) throw new Error(`error ${code} is not in the document's table`);
  return reply.code(row.httpStatus).send({
    ...(row.status !== null && { status: row.status }),
    ...extra,
    error: { error_id: randomUUID(), code, text, type: 'system' },
    timestamp: now(),
  });
}

/** Why the sums of a registration that conforms to the document's fields do not add up, or undefined. */
function inconsistentSums(receipt: RegistrationBody['receipt']): string | undefined {
  let itemsTotal = 0;
  for (const [index, item] of receipt.items.entries()) {
    const price = kopecksOf(item.price);
    const sum = kopecksOf(item.sum);
    if (price === undefined || sum === undefined)
      return `receipt.items.${index}: price and sum in rubles with at most 2 decimals`;
    if (Math.abs(price * item.quantity - sum) >= 1)
      return `receipt.items.${index}.sum: must be price × quantity`;
    itemsTotal += sum;
  }
  const total = kopecksOf(receipt.total);
  if (total !== itemsTotal) return 'receipt.total: must be the sum of the items';
  const paid = receipt.payments.reduce((sum, payment) => sum + (kopecksOf(payment.sum) ?? Number.NaN), 0);
  if (paid !== total) return 'receipt.payments: must add up to receipt.total';
  return undefined;
}

/** Whether a POST declares JSON, as the document requires (`application/json; charset=utf-8`). */
const declaresJson = (request: FastifyRequest) =>
  /^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '');

/** The report of a registered receipt (§10.3, §10.5). */
function report(request: FastifyRequest, document: SandboxDocument, groupCode: string): ReportAnswer {
  const base = {
    uuid: document.id,
    timestamp: now(),
    callback_url: '',
    group_code: groupCode,
    ...DEVICE,
    external_id: document.externalId,
  };
  switch (document.state) {
    case 'processing':
      return { ...base, status: 'wait', error: null, payload: null };
    case 'failed':
    case 'cancelled':
      return {
        ...base,
        status: 'fail',
        // 1 = "connection not established", a driver error of §11.3.
        error: {
          error_id: randomUUID(),
          code: 1,
          text: document.error ?? 'fiscalisation failed',
          type: 'driver',
        },
        payload: null,
      };
    case 'done': {
      const fiscal = document.fiscal;
      if (!fiscal) throw new Error('a done receipt has fiscal attributes');
      return {
        ...base,
        status: 'done',
        error: null,
        payload: {
          total: document.total / 100,
          fns_site: 'www.nalog.gov.ru',
          fn_number: fiscal.fiscalStorageNumber,
          shift_number: fiscal.shiftNumber,
          receipt_datetime: formatTimestamp(fiscal.registeredAt),
          fiscal_receipt_number: fiscal.fiscalDocumentNumber,
          fiscal_document_number: fiscal.fiscalDocumentNumber,
          ecr_registration_number: '0000000001002292',
          fiscal_document_attribute: Number(fiscal.fiscalDocumentAttribute),
          ofd_receipt_url: checkPageUrl(request, document.id),
        },
      };
    }
  }
}

/** Provider A's routes over `ledger`, plus `GET /__sandbox/tokens` (tokens issued, requests refused for their token). */
function providerRoutes(app: FastifyInstance, ledger: SandboxLedger): void {
  const tokens = new Map<string, { login: string; expiresAt: number }>();
  const operations = new Set(Object.values(OPERATIONS));
  const counts = { issued: 0, refused: 0 };
  app.get('/__sandbox/tokens', async () => counts);

  // Bodies Fastify cannot read are the document's errors 41 (media type) and 40 (malformed request).
  app.setErrorHandler((error: FastifyError, _request, reply) =>
    error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
      ? sendError(reply, ERROR_CODES.unsupportedMediaType, `Unsupported Content-Type: ${error.message}`)
      : sendError(reply, ERROR_CODES.badRequest, `Bad request: ${error.message}`),
  );

  /** The login of the request's token, or an answer of error 10 / 11 sent on `reply`. */
  const authorize = (request: FastifyRequest, reply: FastifyReply): string | undefined => {
    const token = request.headers.token;
    const session = typeof token === 'string' ? tokens.get(token) : undefined;
    if (typeof token !== 'string' || !session) {
      if (typeof token === 'string' && token !== '') counts.refused += 1;
      void sendError(reply, ERROR_CODES.missingToken, 'The token is missing or unknown');
      return undefined;
    }
    // Refused credentials end the sessions too: the client asks for a new token and meets the refusal.
    if (session.expiresAt <= Date.now() || ledger.refusesCredentials(false)) {
      tokens.delete(token);
      counts.refused += 1;
      void sendError(reply, ERROR_CODES.expiredToken, 'The token expired');
      return undefined;
    }
    return session.login;
  };

  app.post(`${API_PREFIX}/getToken`, async (request, reply) => {
    if (!declaresJson(request))
      return sendError(reply, ERROR_CODES.unsupportedMediaType, 'Content-Type must be application/json');
    const body = (request.body ?? {}) as { login?: unknown; pass?: unknown };
    if (
      typeof body.login !== 'string' ||
      body.login === '' ||
      typeof body.pass !== 'string' ||
      body.pass === ''
    )
      return sendError(reply, ERROR_CODES.validation, 'Validation error: login and pass are required');
    if (ledger.refusesCredentials())
      return sendError(reply, ERROR_CODES.wrongCredentials, 'Wrong login or password');
    const token = randomUUID().replaceAll('-', '');
    counts.issued += 1;
    tokens.set(token, { login: body.login, expiresAt: Date.now() + ledger.tokenTtlMs });
    return { token, error: null, timestamp: now() };
  });

  app.post(`${API_PREFIX}/:groupCode/:operation`, async (request, reply) => {
    const { groupCode, operation } = request.params as { groupCode: string; operation: string };
    const login = authorize(request, reply);
    if (login === undefined) return reply;
    if (!operations.has(operation))
      return sendError(reply, ERROR_CODES.operationNotSupported, `Operation "${operation}" is not supported`);
    if (!declaresJson(request))
      return sendError(reply, ERROR_CODES.unsupportedMediaType, 'Content-Type must be application/json');
    const fault = ledger.takeFault('register');
    if (fault?.mode === 'error5xx')
      return reply.code(503).type('text/html').send('<h1>503 Service Unavailable</h1>');
    const [problem] = registrationProblems(request.body);
    const body = request.body as RegistrationBody;
    if (fault?.mode === 'reject') return sendError(reply, ERROR_CODES.receiptValidation, fault.message);
    const invalid = problem ?? inconsistentSums(body.receipt);
    if (invalid !== undefined)
      return sendError(reply, ERROR_CODES.receiptValidation, `Validation error of the receipt: ${invalid}`);
    const ending =
      fault?.mode === 'fail'
        ? { state: 'failed' as const, error: fault.message }
        : { state: 'done' as const };
    const { document, created } = ledger.register(
      `${login}/${groupCode}`,
      body.external_id,
      { operation, items: body.receipt.items, total: kopecksOf(body.receipt.total) ?? 0 },
      ending,
    );
    await holdForFault(ledger, fault);
    if (!created && document.state === 'processing')
      return sendError(
        reply,
        ERROR_CODES.existingExternalId,
        `A receipt with external_id ${document.externalId} exists in group ${groupCode} and is not processed yet`,
        { uuid: document.id },
      );
    // A new receipt, or a processed one sent again: its uuid (§6.1).
    const failed = document.state === 'failed' || document.state === 'cancelled';
    return { uuid: document.id, status: failed ? 'fail' : 'wait', error: null, timestamp: now() };
  });

  app.get(`${API_PREFIX}/:groupCode/report/:uuid`, async (request, reply) => {
    const { groupCode, uuid } = request.params as { groupCode: string; uuid: string };
    const login = authorize(request, reply);
    if (login === undefined) return reply;
    const fault = ledger.takeFault('status');
    if (fault?.mode === 'error5xx')
      return reply.code(503).type('text/html').send('<h1>503 Service Unavailable</h1>');
    const document = ledger.find(`${login}/${groupCode}`, uuid);
    await holdForFault(ledger, fault);
    if (!document) return sendError(reply, ERROR_CODES.unknownUuid, `Unknown UUID "${uuid}"`);
    const queued = Date.now() - document.receivedAt.getTime() < ledger.processingMs / 2;
    if (document.state === 'processing' && queued)
      return sendError(
        reply,
        ERROR_CODES.notReady,
        'The state of the receipt is not known yet, ask again later',
        {
          callback_url: '',
        },
      );
    return report(request, document, groupCode);
  });
}

/** Builds the sandbox (`src/connectors/sandboxes.ts` lists it as `cash-register-a`): a new, empty ledger. */
export function buildProviderASandbox(): SandboxApp {
  const ledger = new SandboxLedger(['reject', 'fail', 'delay', 'timeout', 'error5xx', 'credentials']);
  return buildSandboxApp({ ledger, routes: (app) => providerRoutes(app, ledger) });
}
