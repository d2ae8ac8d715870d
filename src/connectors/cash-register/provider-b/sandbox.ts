/**
 * The sandbox of provider B (`cash-register-b`, port 8092 under `npm run sandbox`): speaks the protocol of
 * `protocol.ts` (CloudKassir style) on loopback. Every request must carry HTTP Basic credentials with the
 * sandbox password (any login); a registration is validated (lines, sums, amounts), registered once per login and
 * `X-Request-ID` (a repeat answers like the first time), processed after `processingMs` and reported as
 * `Queued`, `Processed`, `Error` or `Cancelled`. Fault control: `sandbox-kit.ts` (`cancel` included).
 */
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
  PATHS,
  TYPES,
  type Envelope,
  type ReceiptDetails,
  type ReceiptStatus,
  type RegistrationBody,
} from './protocol.ts';

const TYPE_VALUES = new Set(Object.values(TYPES));

/** Why a registration is invalid, or undefined. */
function invalidRegistration(body: Partial<RegistrationBody>): string | undefined {
  if (typeof body.Type !== 'string' || !TYPE_VALUES.has(body.Type)) return 'Type is not a receipt type';
  const receipt = body.CustomerReceipt;
  if (!receipt || typeof receipt.TaxationSystem !== 'number')
    return 'CustomerReceipt.TaxationSystem is required';
  if (!Array.isArray(receipt.Items) || receipt.Items.length === 0) return 'CustomerReceipt.Items is empty';
  let total = 0;
  for (const [index, item] of receipt.Items.entries()) {
    const price = kopecksOf(item.Price);
    const amount = kopecksOf(item.Amount);
    if (typeof item.Label !== 'string' || item.Label === '' || item.Label.length > 128)
      return `Items[${index}].Label: 1..128 characters`;
    if (price === undefined || amount === undefined) return `Items[${index}]: Price and Amount in rubles`;
    if (typeof item.Quantity !== 'number' || item.Quantity <= 0)
      return `Items[${index}].Quantity must be positive`;
    if (price * item.Quantity !== amount) return `Items[${index}].Amount must be Price × Quantity`;
    if (typeof item.Method !== 'number' || typeof item.Object !== 'number')
      return `Items[${index}]: Method and Object are required`;
    total += amount;
  }
  const amounts = receipt.Amounts;
  const paid =
    (kopecksOf(amounts?.Electronic) ?? Number.NaN) +
    (kopecksOf(amounts?.AdvancePayment ?? 0) ?? Number.NaN) +
    (kopecksOf(amounts?.Credit ?? 0) ?? Number.NaN) +
    (kopecksOf(amounts?.Provision ?? 0) ?? Number.NaN);
  if (paid !== total) return 'Amounts must add up to the sum of the items';
  return undefined;
}

const STATUS_OF: Record<SandboxDocument['state'], ReceiptStatus> = {
  processing: 'Queued',
  done: 'Processed',
  failed: 'Error',
  cancelled: 'Cancelled',
};

/** Provider B's routes over `ledger`. */
function providerRoutes(app: FastifyInstance, ledger: SandboxLedger): void {
  /** The login of valid Basic credentials, or undefined after answering 401. */
  const authorize = (request: FastifyRequest, reply: FastifyReply): string | undefined => {
    const match = /^Basic\s+(.+)$/i.exec(request.headers.authorization ?? '');
    const decoded = match ? Buffer.from(match[1] as string, 'base64').toString('utf8') : '';
    const separator = decoded.indexOf(':');
    if (separator <= 0 || decoded.slice(separator + 1) !== SANDBOX_PASSWORD) {
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
    const body = (request.body ?? {}) as Partial<RegistrationBody>;
    const invalid = fault?.mode === 'reject' ? fault.message : invalidRegistration(body);
    if (invalid !== undefined) return { Success: false, Message: invalid, Model: { ErrorCode: -1 } };
    const receipt = body.CustomerReceipt as RegistrationBody['CustomerReceipt'];
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
        operation: body.Type as string,
        items: receipt.Items,
        total: receipt.Items.reduce((sum, item) => sum + Math.round(item.Amount * 100), 0),
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
    const fiscal = document?.fiscal;
    if (!document || !fiscal) return { Success: false, Message: 'Receipt not found or not processed' };
    const answer: Envelope<ReceiptDetails> = {
      Success: true,
      Message: null,
      Model: {
        Id: document.id,
        Type: document.operation,
        InvoiceId: document.externalId,
        Amount: document.total / 100,
        DocumentNumber: fiscal.fiscalDocumentNumber,
        SessionNumber: fiscal.shiftNumber,
        FiscalSign: fiscal.fiscalDocumentAttribute,
        FiscalNumber: fiscal.fiscalStorageNumber,
        RegNumber: '0000000002004563',
        DateTime: new Date(fiscal.registeredAt.getTime() + 3 * 3_600_000)
          .toISOString()
          .replace('Z', '+03:00'),
        Url: checkPageUrl(request, document.id),
      },
    };
    return answer;
  });
}

/** The definition `src/connectors/sandboxes.ts` lists. */
export const providerBSandbox: SandboxDefinition = {
  name: 'cash-register-b',
  urlSetting: 'cashRegisterBUrl',
  defaultPort: 8092,
  start: ({ host, port }) => {
    const ledger = new SandboxLedger(['reject', 'fail', 'cancel', 'delay', 'timeout', 'error5xx']);
    return startSandboxServer({
      name: 'cash-register-b',
      host,
      port,
      ledger,
      routes: (app) => providerRoutes(app, ledger),
    });
  },
};
