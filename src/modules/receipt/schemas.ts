/**
 * Schemas of the receipt group (spec §2 "Receipt", §4.3, D8). The response has exactly the spec's fields plus
 * three read-only ones (P79): `fiscalDocumentAttribute`, `fiscalStorageNumber` and `providerStatus`.
 */
import { Type, type Static } from 'typebox';
import { StringEnum } from '../../domain/enums.ts';
import { DateTime as DateTimeSchema, Int64, Int64String, Nullable } from '../../http/schemas.ts';
import { CASH_REGISTER_SERVICES, RECEIPT_TYPES } from '../../connectors/cash-register/connector.ts';
import { RECEIPT_STATUSES } from './tables.ts';

const DateTime = DateTimeSchema();

/** A fiscal receipt of a receiving document. */
export const Receipt = Type.Object(
  {
    id: Int64({ description: 'Our receipt id; also the external id (idempotency key) sent to the provider' }),
    clientId: Int64(),
    orderId: Int64({ description: 'The receiving document' }),
    organizationId: Int64(),
    externalReceiptId: Nullable(
      Type.String({ description: "The provider's id of the receipt, once the provider acknowledged it" }),
    ),
    fiscalNumber: Nullable(Type.String({ description: 'Fiscal document number (ФД), once COMPLETED' })),
    cashRegisterService: StringEnum(['NONE', ...CASH_REGISTER_SERVICES] as const),
    fnsUrl: Nullable(Type.String({ description: 'Where the receipt can be checked, once COMPLETED' })),
    status: StringEnum(RECEIPT_STATUSES, {
      description: 'CREATED (not acknowledged yet), PENDING, COMPLETED, FAILED, CANCELLED (D8.2)',
    }),
    receiptType: StringEnum(RECEIPT_TYPES),
    totalAmount: Type.Number({ description: 'Sum of the lines, exact to the kopeck' }),
    createdDate: DateTime,
    completedDate: Nullable(DateTime),
    errorMessage: Nullable(
      Type.String({
        description:
          'FAILED/CANCELLED: why; CREATED/PENDING: why the last exchange with the provider failed (it is retried)',
      }),
    ),
    fiscalDocumentAttribute: Nullable(
      Type.String({ description: 'Fiscal document attribute (ФПД), read-only' }),
    ),
    fiscalStorageNumber: Nullable(Type.String({ description: 'Fiscal storage number (ФН), read-only' })),
    providerStatus: Nullable(Type.String({ description: "The provider's own status word, read-only" })),
  },
  { $id: 'Receipt', title: 'Receipt' },
);
export type Receipt = Static<typeof Receipt>;

/** Query of `POST /api/receipt/order/{orderId}` (spec §4.3). */
export const ReceiptCreateQuery = Type.Object({
  type: Type.Optional(
    StringEnum(RECEIPT_TYPES, { default: 'INCOME', description: 'Receipt type, default INCOME' }),
  ),
});
export type ReceiptCreateQuery = Static<typeof ReceiptCreateQuery>;

/** Path of the operations on a document's receipts. */
export const OrderParams = Type.Object({ orderId: Int64String });
/** Path of the operations on one receipt. */
export const ReceiptParams = Type.Object({ receiptId: Int64String });
