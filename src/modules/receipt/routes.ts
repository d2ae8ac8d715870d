/**
 * Routes of the receipt group (spec §4.3, decision D8), under `/api/receipt`. The spec's Access column decides:
 * creation is write, the three GETs are read — `GET /{receiptId}/update` too, although it refreshes the status.
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorResponses, parseId } from '../../http/schemas.ts';
import type { ReceiptService } from './service.ts';
import { OrderParams, Receipt, ReceiptCreateQuery, ReceiptParams } from './schemas.ts';

const tags = ['receipt'];
const ReceiptRef = Type.Ref('Receipt');
const unavailable = { 503: Type.Ref('ErrorResponse') };

/** The receipt operations over the group's service. */
export const receiptRoutes =
  (service: ReceiptService): FastifyPluginCallbackTypebox =>
  (app, _options, done) => {
    app.addSchema(Receipt);
    const orderId = (params: { orderId: string }) => parseId('order', params.orderId);
    const receiptId = (params: { receiptId: string }) => parseId('receipt', params.receiptId);

    app.get(
      '/order/:orderId',
      {
        schema: {
          tags,
          summary: 'The receipts of a receiving document, oldest first',
          params: OrderParams,
          response: { 200: Type.Array(ReceiptRef), ...errorResponses },
        },
      },
      (request) => service.listOfOrder(request.principal, orderId(request.params)),
    );
    app.post(
      '/order/:orderId',
      {
        schema: {
          tags,
          summary:
            'Create a fiscal receipt of a receiving document and send it to the organization’s cash-register provider',
          params: OrderParams,
          querystring: ReceiptCreateQuery,
          response: { 200: ReceiptRef, ...errorResponses },
        },
      },
      (request) => service.create(request.principal, orderId(request.params), request.query.type ?? 'INCOME'),
    );
    app.get(
      '/:receiptId',
      {
        schema: {
          tags,
          summary: 'A receipt as stored',
          params: ReceiptParams,
          response: { 200: ReceiptRef, ...errorResponses },
        },
      },
      (request) => service.get(request.principal, receiptId(request.params)),
    );
    app.get(
      '/:receiptId/update',
      {
        schema: {
          tags,
          summary: 'Ask the provider about the receipt, store its answer and return the receipt',
          params: ReceiptParams,
          response: { 200: ReceiptRef, ...errorResponses, ...unavailable },
        },
      },
      (request) => service.update(request.principal, receiptId(request.params)),
    );
    done();
  };
