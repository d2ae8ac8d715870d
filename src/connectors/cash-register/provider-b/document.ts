/**
 * Provider B's protocol as its operator's documented client library states it, encoded once: the registration
 * the `cloudpayments` npm package (6.0.1, `ReceiptApi.createReceipt`) builds and asserts — `Inn` and `Type`
 * required, `CustomerReceipt` with a valid `taxationSystem` and at least one item with a valid VAT — and the
 * envelopes of the answers we read (`Success`, `Message`, `Model`; the fiscal data of a processed receipt under
 * `Model.AdditionalData`). Property names are compared after `pascalCased` (the operator ignores case; the package
 * writes camelCase inside `CustomerReceipt`). The sandbox refuses with `registrationProblems`; the conformance test
 * checks our client's requests and the sandbox's answers against these schemas.
 */
import { Type } from 'typebox';
import { schemaProblems } from '../provider-a/document.ts';

const oneOf = <T extends string | number>(values: readonly T[]) =>
  Type.Union(values.map((value) => Type.Literal(value)));
const money = Type.Number({ minimum: 0 });

/** The receipt types (`ReceiptTypes`). */
export const RECEIPT_TYPES = ['Income', 'IncomeReturn', 'Expense', 'ExpenseReturn'] as const;
/** The taxation systems (`TaxationSystem`: general 0 … patent 5). */
export const TAXATION_SYSTEMS = [0, 1, 2, 3, 4, 5] as const;
/** The VAT rates (`VAT`; null = no VAT), with the 5, 7, 22 % rates of 2025–2026. */
export const VAT_RATES = [0, 10, 18, 20, 110, 118, 120, 5, 7, 22, 105, 107, 122] as const;

/** The body of `POST /kkt/receipt`, property names PascalCased. */
export const RegistrationRequest = Type.Object({
  Inn: Type.Union([
    Type.String({ pattern: '^([0-9]{10}|[0-9]{12})$' }),
    Type.Integer({ minimum: 1e9, maximum: 1e12 - 1 }),
  ]),
  Type: oneOf(RECEIPT_TYPES),
  InvoiceId: Type.Optional(Type.String()),
  AccountId: Type.Optional(Type.String()),
  CultureName: Type.Optional(Type.String()),
  CustomerReceipt: Type.Object({
    TaxationSystem: oneOf(TAXATION_SYSTEMS),
    Email: Type.Optional(Type.String()),
    Phone: Type.Optional(Type.String()),
    CalculationPlace: Type.Optional(Type.String({ maxLength: 256 })),
    Items: Type.Array(
      Type.Object({
        Label: Type.String({ minLength: 1, maxLength: 128 }),
        Price: money,
        Quantity: Type.Number({ exclusiveMinimum: 0 }),
        Amount: money,
        Vat: Type.Optional(Type.Union([Type.Null(), oneOf(VAT_RATES)])),
        Method: Type.Optional(Type.Integer({ minimum: 0, maximum: 7 })),
        Object: Type.Optional(Type.Integer({ minimum: 0 })),
        MeasurementUnit: Type.Optional(Type.String()),
        Ean13: Type.Optional(Type.String()),
      }),
      { minItems: 1 },
    ),
    Amounts: Type.Optional(
      Type.Object({
        Electronic: Type.Optional(money),
        AdvancePayment: Type.Optional(money),
        Credit: Type.Optional(money),
        Provision: Type.Optional(money),
      }),
    ),
  }),
});

const envelope = <T extends Parameters<typeof Type.Optional>[0]>(model: T) =>
  Type.Object({ Success: Type.Boolean(), Message: Type.Union([Type.String(), Type.Null()]), Model: model });

/** The answers of each operation we use. */
export const ANSWERS = {
  register: envelope(
    Type.Optional(
      Type.Object({ Id: Type.Optional(Type.String({ minLength: 1 })), ErrorCode: Type.Integer() }),
    ),
  ),
  status: envelope(Type.Optional(oneOf(['Queued', 'Processed', 'Error', 'Cancelled'] as const))),
  details: envelope(
    Type.Optional(
      Type.Object({
        AdditionalData: Type.Union([
          Type.Null(),
          Type.Object({
            Id: Type.String(),
            DocumentNumber: Type.Integer(),
            SessionNumber: Type.Integer(),
            FiscalSign: Type.String({ pattern: '^[0-9]+$' }),
            FiscalNumber: Type.String({ pattern: '^[0-9]+$' }),
            RegNumber: Type.String(),
            DateTime: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}$' }),
            Url: Type.String(),
            OfdReceiptUrl: Type.Union([Type.String(), Type.Null()]),
          }),
        ]),
      }),
    ),
  ),
} as const;

/** `value` with every property name's first letter upper-cased, at every depth (the operator ignores case). */
export function pascalCased(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(pascalCased);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key.charAt(0).toUpperCase() + key.slice(1),
      pascalCased(inner),
    ]),
  );
}

/** How a registration body (any case) leaves the package's shape, first problem first; empty when it conforms. */
export const registrationProblems = (body: unknown): string[] =>
  schemaProblems(RegistrationRequest, pascalCased(body));

/** How an answer of `operation` leaves its envelope; empty when it conforms. */
export const answerProblems = (operation: keyof typeof ANSWERS, body: unknown): string[] =>
  schemaProblems(ANSWERS[operation], body);
