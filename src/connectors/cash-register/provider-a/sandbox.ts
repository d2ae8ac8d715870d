/**
 * The sandbox of provider A (`cash-register-a`, port 8091 under `npm run sandbox`): speaks the protocol of
 * `protocol.ts` (ATOL Online v5 style) on loopback. Any login with the sandbox password gets a token valid for
 * `tokenTtlMs` (24 h unless the control API changes it); receipts are validated (lines, sums, payments),
 * registered once per login and external id (a repeat answers error 33 with the existing uuid), fiscalised after
 * `processingMs`, and reported with fiscal attributes and a check page URL. Fault control: `sandbox-kit.ts`.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxDefinition } from '../../sandboxes.ts';
import {
  checkPageUrl,
  holdForFault,
  kopecksOf,
  SANDBOX_PASSWORD,
  SandboxLedger,
  startSandboxServer,
  type SandboxDocument,
} from '../sandbox-kit.ts';
import {
  API_PREFIX,
  ERROR_CODES,
  formatTimestamp,
  OPERATIONS,
  type RegistrationBody,
  type ReportAnswer,
} from './protocol.ts';

const now = () => formatTimestamp(new Date());

const protocolError = (code: number, text: string, type = 'system') => ({
  error: { error_id: randomUUID(), code, text, type },
  timestamp: now(),
});

/** Why a registration body is invalid (ATOL checks these), or undefined when it is valid. */
function invalidRegistration(body: Partial<RegistrationBody>): string | undefined {
  if (typeof body.external_id !== 'string' || body.external_id === '' || body.external_id.length > 128)
    return 'external_id: a string of 1..128 characters is required';
  if (typeof body.timestamp !== 'string') return 'timestamp is required (dd.MM.yyyy HH:mm:ss)';
  const receipt = body.receipt;
  if (!receipt || typeof receipt.company?.sno !== 'string') return 'receipt.company.sno is required';
  if (!Array.isArray(receipt.items) || receipt.items.length === 0) return 'receipt.items must not be empty';
  let itemsTotal = 0;
  for (const [index, item] of receipt.items.entries()) {
    const price = kopecksOf(item.price);
    const sum = kopecksOf(item.sum);
    if (typeof item.name !== 'string' || item.name === '' || item.name.length > 128)
      return `receipt.items[${index}].name: 1..128 characters`;
    if (price === undefined || sum === undefined) return `receipt.items[${index}]: price and sum in rubles`;
    if (typeof item.quantity !== 'number' || item.quantity <= 0)
      return `receipt.items[${index}].quantity must be positive`;
    if (price * item.quantity !== sum) return `receipt.items[${index}].sum must be price × quantity`;
    if (typeof item.payment_method !== 'string' || typeof item.payment_object !== 'number')
      return `receipt.items[${index}]: payment_method and payment_object are required`;
    if (typeof item.vat?.type !== 'string') return `receipt.items[${index}].vat.type is required`;
    itemsTotal += sum;
  }
  const total = kopecksOf(receipt.total);
  if (total !== itemsTotal) return 'receipt.total must be the sum of the items';
  if (!Array.isArray(receipt.payments) || receipt.payments.length === 0)
    return 'receipt.payments must not be empty';
  const paid = receipt.payments.reduce((sum, payment) => sum + (kopecksOf(payment.sum) ?? Number.NaN), 0);
  if (paid !== total) return 'receipt.payments must add up to receipt.total';
  return undefined;
}

/** The report of a registered receipt. */
function report(request: FastifyRequest, document: SandboxDocument, groupCode: string): ReportAnswer {
  const base = {
    uuid: document.id,
    external_id: document.externalId,
    group_code: groupCode,
    timestamp: now(),
  };
  switch (document.state) {
    case 'processing':
      return { ...base, status: 'wait', error: null, payload: null };
    case 'failed':
    case 'cancelled':
      return {
        ...base,
        status: 'fail',
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

  /** The login of the request's token, or an answer of error 10 / 11 sent on `reply`. */
  const authorize = (request: FastifyRequest, reply: FastifyReply): string | undefined => {
    const token = request.headers.token;
    if (typeof token !== 'string' || token === '') {
      void reply.code(401).send(protocolError(ERROR_CODES.missingToken, 'Token header is missing'));
      return undefined;
    }
    const session = tokens.get(token);
    if (!session || session.expiresAt <= Date.now()) {
      tokens.delete(token);
      counts.refused += 1;
      void reply
        .code(401)
        .send(protocolError(ERROR_CODES.expiredToken, 'The token does not exist or expired'));
      return undefined;
    }
    return session.login;
  };

  app.post(`${API_PREFIX}/getToken`, async (request, reply) => {
    const body = (request.body ?? {}) as { login?: unknown; pass?: unknown };
    if (typeof body.login !== 'string' || typeof body.pass !== 'string')
      return reply
        .code(400)
        .send({ token: null, ...protocolError(ERROR_CODES.badTokenRequest, 'login and pass are required') });
    if (body.pass !== SANDBOX_PASSWORD)
      return reply
        .code(401)
        .send({ token: null, ...protocolError(ERROR_CODES.wrongCredentials, 'Wrong login or password') });
    const token = randomUUID().replaceAll('-', '');
    counts.issued += 1;
    tokens.set(token, { login: body.login, expiresAt: Date.now() + ledger.tokenTtlMs });
    return { token, error: null, timestamp: now() };
  });

  app.post(`${API_PREFIX}/:groupCode/:operation`, async (request, reply) => {
    const { groupCode, operation } = request.params as { groupCode: string; operation: string };
    if (!operations.has(operation))
      return reply.code(404).send(protocolError(ERROR_CODES.validation, `unknown operation ${operation}`));
    const login = authorize(request, reply);
    if (login === undefined) return reply;
    const fault = ledger.takeFault('register');
    if (fault?.mode === 'error5xx')
      return reply.code(503).type('text/html').send('<h1>503 Service Unavailable</h1>');
    const body = (request.body ?? {}) as Partial<RegistrationBody>;
    const invalid = fault?.mode === 'reject' ? fault.message : invalidRegistration(body);
    if (invalid !== undefined)
      return reply
        .code(400)
        .send({ uuid: null, status: 'fail', ...protocolError(ERROR_CODES.validation, invalid) });
    const receipt = body.receipt as RegistrationBody['receipt'];
    const ending =
      fault?.mode === 'fail'
        ? { state: 'failed' as const, error: fault.message }
        : { state: 'done' as const };
    const { document, created } = ledger.register(
      `${login}/${groupCode}`,
      body.external_id as string,
      { operation, items: receipt.items, total: Math.round(receipt.total * 100) },
      ending,
    );
    await holdForFault(ledger, fault);
    if (!created)
      return reply.code(400).send({
        uuid: document.id,
        status: null,
        ...protocolError(
          ERROR_CODES.existingExternalId,
          `A receipt with external_id ${document.externalId} exists in group ${groupCode}`,
        ),
      });
    return { uuid: document.id, status: 'wait', error: null, timestamp: now() };
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
    if (!document) return reply.code(404).send(protocolError(ERROR_CODES.notFound, `No receipt ${uuid}`));
    return report(request, document, groupCode);
  });
}

/** The definition `src/connectors/sandboxes.ts` lists. */
export const providerASandbox: SandboxDefinition = {
  name: 'cash-register-a',
  urlSetting: 'cashRegisterAUrl',
  defaultPort: 8091,
  start: ({ host, port }) => {
    const ledger = new SandboxLedger(['reject', 'fail', 'delay', 'timeout', 'error5xx']);
    return startSandboxServer({
      name: 'cash-register-a',
      host,
      port,
      ledger,
      routes: (app) => providerRoutes(app, ledger),
    });
  },
};
