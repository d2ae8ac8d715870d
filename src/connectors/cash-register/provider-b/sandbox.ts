/**
 * The sandbox of provider B (`cash-register-b`, port 8092 under `npm run sandbox`): speaks the protocol of
 * `protocol.ts` (CloudKassir) on loopback. Every request must carry HTTP Basic credentials — any login and
 * password, refused only under the `credentials` fault (401). A registration, in any letter case (the
 * `cloudpayments` package's camelCase included), must have the package's shape (`document.ts`: `Inn`, `Type`,
 * taxation system, items) and add up (Price × Quantity = Amount; `Amounts`, when given, add up to the items; absent,
 * all is paid electronically); it is registered once per login and `X-Request-ID` (a repeat answers like the
 * first time), processed after `processingMs` and reported as `Queued`, `Processed`, `Error` or `Cancelled`, the
 * fiscal data of a processed one under `Model.AdditionalData`. Fault control: `sandbox-kit.ts` (`cancel` included).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxApp } from '../../sandboxes.ts';
import {
  checkPageUrl,
  FAULT_MODES,
  holdForFault,
  kopecksOf,
  SandboxLedger,
  buildSandboxApp,
  type SandboxDocument,
} from '../sandbox-kit.ts';
import { pascalCased, registrationProblems } from './document.ts';
import {
  formatReceiptTime,
  PATHS,
  type Envelope,
  type ProtocolItem,
  type ReceiptDetails,
  type ReceiptStatus,
  type RegistrationBody,
} from './protocol.ts';

/** Why the sums of a registration of the package's shape do not add up, or undefined. */
function inconsistentSums(receipt: RegistrationBody['CustomerReceipt']): string | undefined {
  let total = 0;
  for (const [index, item] of receipt.Items.entries()) {
    const price = kopecksOf(item.Price);
    const amount = kopecksOf(item.Amount);
    if (price === undefined || amount === undefined)
      return `Items[${index}]: Price and Amount in rubles with at most 2 decimals`;
    if (Math.abs(price * item.Quantity - amount) >= 1)
      return `Items[${index}].Amount must be Price × Quantity`;
    total += amount;
  }
  const amounts = receipt.Amounts as Partial<RegistrationBody['CustomerReceipt']['Amounts']> | undefined;
  if (amounts === undefined) return undefined;
  const paid = [amounts.Electronic, amounts.AdvancePayment, amounts.Credit, amounts.Provision].reduce<number>(
    (sum, value) => sum + (kopecksOf(value ?? 0) ?? Number.NaN),
    0,
  );
  return paid === total ? undefined : 'Amounts must add up to the sum of the items';
}

const STATUS_OF: Record<SandboxDocument['state'], ReceiptStatus> = {
  processing: 'Queued',
  done: 'Processed',
  failed: 'Error',
  cancelled: 'Cancelled',
};

/** Provider B's routes over `ledger`. */
function providerRoutes(app: FastifyInstance, ledger: SandboxLedger): void {
  /** The login of Basic credentials (any login and password), or undefined after answering 401. */
  const authorize = (request: FastifyRequest, reply: FastifyReply): string | undefined => {
    const match = /^Basic\s+(.+)$/i.exec(request.headers.authorization ?? '');
    const decoded = match ? Buffer.from(match[1] as string, 'base64').toString('utf8') : '';
    const separator = decoded.indexOf(':');
    if (separator <= 0 || separator === decoded.length - 1 || ledger.refusesCredentials()) {
      void reply
        .code(401)
        .header('www-authenticate', 'Basic realm="kkt"')
        .type('text/plain')
        .send('Unauthorized: Access is denied due to invalid credentials');
      return undefined;
    }
    return decoded.slice(0, separator);
  };
  const unavailableAnswer = (reply: FastifyReply) =>
    reply.code(503).type('text/html').send('<h1>503 Service Unavailable</h1>');

  app.post(PATHS.register, async (request, reply) => {
    const login = authorize(request, reply);
    if (login === undefined) return reply;
    const requestId = request.headers['x-request-id'];
    if (typeof requestId !== 'string' || requestId === '')
      return { Success: false, Message: 'X-Request-ID header is required', Model: { ErrorCode: -1 } };
    const fault = ledger.takeFault('register');
    if (fault?.mode === 'error5xx') return unavailableAnswer(reply);
    const [problem] = registrationProblems(request.body);
    const body = pascalCased(request.body) as RegistrationBody;
    const invalid =
      fault?.mode === 'reject' ? fault.message : (problem ?? inconsistentSums(body.CustomerReceipt));
    if (invalid !== undefined) return { Success: false, Message: invalid, Model: { ErrorCode: -1 } };
    const items: ProtocolItem[] = body.CustomerReceipt.Items;
    const ending =
      fault?.mode === 'fail' || fault?.mode === 'cancel'
        ? {
            state: fault.mode === 'fail' ? ('failed' as const) : ('cancelled' as const),
            error: fault.message,
          }
        : { state: 'done' as const };
    const { document } = ledger.register(
      login,
      requestId,
      {
        operation: body.Type,
        items,
        total: items.reduce((sum, item) => sum + (kopecksOf(item.Amount) ?? 0), 0),
        taxationSystem: body.CustomerReceipt.TaxationSystem,
      },
      ending,
    );
    await holdForFault(ledger, fault);
    return { Success: true, Message: 'Queued', Model: { Id: document.id, ErrorCode: 0 } };
  });

  app.post(PATHS.status, async (request, reply) => {
    const login = authorize(request, reply);
    if (login === undefined) return reply;
    const fault = ledger.takeFault('status');
    if (fault?.mode === 'error5xx') return unavailableAnswer(reply);
    const document = ledger.find(login, String((request.body as { Id?: unknown } | undefined)?.Id));
    await holdForFault(ledger, fault);
    if (!document) return { Success: false, Message: 'Receipt not found' };
    const answer: Envelope<ReceiptStatus> = {
      Success: true,
      Message: document.error,
      Model: STATUS_OF[document.state],
    };
    return answer;
  });

  app.post(PATHS.details, async (request, reply) => {
    const login = authorize(request, reply);
    if (login === undefined) return reply;
    const document = ledger.find(login, String((request.body as { Id?: unknown } | undefined)?.Id));
    if (!document) return { Success: false, Message: 'Receipt not found' };
    const fiscal = document.fiscal;
    const answer: Envelope<ReceiptDetails> = {
      Success: true,
      Message: null,
      Model: {
        Items: document.items as ProtocolItem[],
        TaxationSystem: document.taxationSystem ?? 0,
        AdditionalData: fiscal && {
          Id: document.id,
          Amount: document.total / 100,
          Type: document.operation,
          InvoiceId: document.externalId,
          DocumentNumber: fiscal.fiscalDocumentNumber,
          SessionNumber: fiscal.shiftNumber,
          FiscalSign: fiscal.fiscalDocumentAttribute,
          FiscalNumber: fiscal.fiscalStorageNumber,
          RegNumber: '0000000002004563',
          DateTime: formatReceiptTime(fiscal.registeredAt),
          Url: checkPageUrl(request, document.id),
          OfdReceiptUrl: checkPageUrl(request, document.id),
        },
      },
    };
    return answer;
  });
}

/** Builds the sandbox (`src/connectors/sandboxes.ts` lists it as `cash-register-b`): a new, empty ledger. */
export function buildProviderBSandbox(): SandboxApp {
  const ledger = new SandboxLedger(FAULT_MODES);
  return buildSandboxApp({ ledger, routes: (app) => providerRoutes(app, ledger) });
}
