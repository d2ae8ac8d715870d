/**
 * Routes of the webhook group (spec §4.4, decision D9), registered under `/api/webhook`: list and create at
 * `/api/webhook/`, delete at `/api/webhook/{webhookId}`, secret rotation at `/api/webhook/{webhookId}/secret/rotate`
 * (P167) and the delivery log.
 * GET needs a READ or WRITE token, every other method a WRITE token (D2.3).
 */
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { EmptyResponse, errorResponses, parseId, sendEmpty } from '../../http/schemas.ts';
import type { WebhookService } from './service.ts';
import {
  CreatedWebhook,
  DeliveriesQuery,
  DeliveryParams,
  RotatedWebhook,
  SecretRotationBody,
  Webhook,
  WebhookCreateBody,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookParams,
} from './schemas.ts';

/** The operations of spec §4.4 and the delivery log, over the group's service. */
export const webhookRoutes =
  (webhooks: WebhookService): FastifyPluginCallbackTypebox =>
  (app, _options, done) => {
    app.addSchema(Webhook);
    app.addSchema(WebhookDelivery);
    const tags = ['webhook'];

    app.get(
      '/',
      {
        schema: {
          tags,
          summary: 'Webhooks of the client account',
          response: { 200: Type.Array(Type.Ref('Webhook')), ...errorResponses },
        },
      },
      (request) => webhooks.list(request.principal),
    );

    app.post(
      '/',
      {
        schema: {
          tags,
          summary: 'Create a webhook; the response carries the signing secret, shown only once',
          body: WebhookCreateBody,
          response: { 200: CreatedWebhook, ...errorResponses },
        },
      },
      (request) => webhooks.create(request.principal, request.body),
    );

    app.delete(
      '/:webhookId',
      {
        schema: {
          tags,
          summary: 'Delete a webhook; its pending deliveries are cancelled',
          params: WebhookParams,
          response: { 200: EmptyResponse, ...errorResponses },
        },
      },
      async (request, reply) => {
        await webhooks.delete(request.principal, parseId('webhook', request.params.webhookId));
        return sendEmpty(reply);
      },
    );

    app.post(
      '/:webhookId/secret/rotate',
      {
        schema: {
          tags,
          summary:
            'Give the webhook a new signing secret, shown only in this response; during the grace period deliveries carry the signatures of both secrets',
          params: WebhookParams,
          body: SecretRotationBody,
          response: { 200: RotatedWebhook, ...errorResponses },
        },
        // The body is optional: a request without one takes the default grace period.
        preValidation: async (request) => {
          request.body ??= {};
        },
      },
      (request) =>
        webhooks.rotateSecret(request.principal, parseId('webhook', request.params.webhookId), request.body),
    );

    app.get(
      '/:webhookId/deliveries',
      {
        schema: {
          tags,
          summary: 'Delivery log of a webhook, newest first',
          params: WebhookParams,
          querystring: DeliveriesQuery,
          response: { 200: WebhookDeliveryPage, ...errorResponses },
        },
      },
      (request) =>
        webhooks.deliveries(request.principal, parseId('webhook', request.params.webhookId), request.query),
    );

    app.post(
      '/:webhookId/deliveries/:deliveryId/retry',
      {
        schema: {
          tags,
          summary: 'Deliver again now (same webhook-id)',
          params: DeliveryParams,
          response: { 200: Type.Ref('WebhookDelivery'), ...errorResponses },
        },
      },
      (request) =>
        webhooks.retry(
          request.principal,
          parseId('webhook', request.params.webhookId),
          parseId('delivery', request.params.deliveryId),
        ),
    );
    done();
  };
