/** Enumerations of the inbound group (spec §2 "Inbound receiving document", §3 States). */
import { StringEnum } from '../../domain/enums.ts';

export const ORDER_TYPES = [
  'FBM',
  'FBS',
  'INCOME',
  'RETAIL',
  'WHOLESALE',
  'FBO',
  'MOVEMENT',
  'WRITE_OFF',
  'PRODUCTION',
] as const;
export type OrderType = (typeof ORDER_TYPES)[number];

export const ORDER_STATUSES = [
  'CREATED',
  'REVOKING',
  'REVOKED',
  'ORDER_CREATED',
  'CARDS_CREATED',
  'BOX_BARCODES',
  'IMAGES_UPLOADED',
  'INVOICE_UPLOADED',
  'READY_TO_SUPPLY',
  'SUPPLIED',
  'FINISHED',
  'COLLECTED',
  'SEND',
  'DELIVERY',
  'REFUND',
  'COLLECTING',
  'PACKING',
  'PAYMENT_REQUIRED',
  'CANCELED',
  'CONTROVERSIAL',
  'OVERDUE',
  'READY_FOR_PICKUP',
  'WAITING_SUPPLY',
  'PICK_UP_REFUND',
  'REFUND_RECEIVED',
  'DELETED',
  'RESTORE',
  'PRODUCTION_CONFIRMED',
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** Statuses after which a document counts as closed (`actual=true` hides them; `closeDate` is set). */
export const CLOSED_ORDER_STATUSES: readonly OrderStatus[] = [
  'FINISHED',
  'CANCELED',
  'REVOKED',
  'REFUND_RECEIVED',
];

export const MARKING_STATUSES = [
  'UNKNOWN',
  'CARDS_SEND',
  'CARDS_CREATED',
  'SUZ_ORDERS_CREATED',
  'MARKS_RECEIVED',
  'CARDS_SIGNED',
  'DOCUMENT_CREATED',
  'SUCCESS',
  'NO_NEED_MARKING',
] as const;
export type MarkingStatus = (typeof MARKING_STATUSES)[number];

/** Marking type of the reference's Order (`markingType`). */
export const MARKING_TYPES = ['PRODUCTION', 'IMPORT', 'REMAINS', 'REMARK', 'COMMISSION'] as const;

/** Box type of the reference's Order (`boxType`). */
export const BOX_TYPES = ['DEFAULT', 'MONO', 'MONO_PALLET', 'SUPERSEIF', 'QR', 'FBS'] as const;

export const ORDER_SORT_FIELDS = [
  'ID',
  'CREATEDDATE',
  'ORDERCREATED',
  'CREATED',
  'CREATEDUSER',
  'STATUS',
  'SERVICE',
  'TYPE',
  'BOXTYPE',
  'NAME',
  'ORGANIZATIONID',
  'WAREHOUSE',
  'INVOICENUMBER',
  'EXTERNALORDERID',
  'QUEUE',
  'SUPPLYID',
  'CLOSEDATE',
  'STARTCOLLECTDATE',
  'CLOSEUSERID',
  'USERID',
  'PRICE',
  'PRODUCT',
  'COLLECTORDERTASKID',
  'DELIVERYDATE',
  'MARKINGSTATUS',
  'QUANTITY',
  'DATE',
  'SERVICEWAREHOUSEID',
] as const;
export type OrderSortField = (typeof ORDER_SORT_FIELDS)[number];

export const CARRIERS = [
  'OWN_DELIVERY',
  'POST',
  ...Array.from({ length: 9 }, (_, index) => `CARRIER_0${index + 1}`),
] as const;

export const OrderTypeSchema = StringEnum(ORDER_TYPES, { description: 'Order type' });
export const OrderStatusSchema = StringEnum(ORDER_STATUSES, { description: 'Order status' });
export const MarkingStatusSchema = StringEnum(MARKING_STATUSES, { description: 'Marking status' });
export const OrderSortFieldSchema = StringEnum(ORDER_SORT_FIELDS, {
  description: 'Sort field; NAME ignores case (P222)',
});
export const CarrierSchema = StringEnum(CARRIERS as readonly string[], { description: 'Delivery carrier' });
