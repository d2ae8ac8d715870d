/**
 * Webhook subscriptions and their delivery log (spec §4.4, §6, decision D9). Every query is scoped by the
 * caller's client; another client's subscription is indistinguishable from a missing one (D2.5). Every mutation is
 * one change (`ChangeRunner.run`), so an idempotency key stores its answer with it (P121).
 */
import { cutPage, resolvePaging, type CursorCodec } from '../../http/cursor.ts';
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { SecretBox } from '../../security/secret-box.ts';
import type { DB } from '../../db/schema.ts';
import type { ChangeRunner } from '../../changes/change-runner.ts';
import type { Principal } from '../../http/auth.ts';
import { AppError, notFound, validationError } from '../../http/errors.ts';
import { EVENT_TYPES } from '../../events/outbox.ts';
import { organizationRepository } from '../accounts/repository.ts';
import type { DeliveryQueue } from './delivery-queue.ts';
import { WAKE_KEY } from './dispatcher.ts';
import { deliveryRepository, webhookRepository } from './repository.ts';
import {
  presentCreatedWebhook,
  presentDelivery,
  presentRotatedWebhook,
  presentWebhook,
} from './presenter.ts';
import type {
  CreatedWebhook,
  DeliveriesQuery,
  RotatedWebhook,
  SecretRotationBody,
  Webhook,
  WebhookCreateBody,
  WebhookDelivery,
  WebhookDeliveryPage,
} from './schemas.ts';
import { assertSafeWebhookUrl, UnsafeTargetError } from '../../connectors/url-guard.ts';
import { trimText } from '../../domain/text.ts';
import { splitUrlPassword } from './url-password.ts';

/** A new Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Grace period of a rotation without `gracePeriodSeconds`: 24 h. */
export const DEFAULT_GRACE_PERIOD_SECONDS = 86_400;

/** Operations of the webhook group. */
export class WebhookService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly changes: ChangeRunner,
    private readonly queue: DeliveryQueue,
    private readonly options: { allowPrivate: boolean },
    /** Seals the signing secret before it is stored (P160). */
    private readonly secrets: SecretBox,
    private readonly cursors: CursorCodec,
  ) {}

  /** The client's subscriptions (deleted ones excluded), without secrets. */
  async list(principal: Principal): Promise<Webhook[]> {
    return (await webhookRepository.listOfClient(this.db, principal.clientId)).map(presentWebhook);
  }

  /**
   * Creates a subscription (D9.1) and returns it with its secret.
   * @throws 400 `error_validation` on `types` (empty) or `types.<index>` (an unknown kind) or `url` (not http(s), or a refused target, D9.4)
   * @throws 400 `error_organization_not_found` when the organization is not the caller's client's
   */
  async create(principal: Principal, body: WebhookCreateBody): Promise<CreatedWebhook> {
    if (body.types.length === 0) throw validationError('types', 'at least one event kind is required');
    const unknown = body.types.findIndex((type) => !(EVENT_TYPES as readonly string[]).includes(type));
    if (unknown !== -1)
      throw validationError(
        `types.${unknown}`,
        `unknown kind ${body.types[unknown]}; must be one of ${EVENT_TYPES.join(', ')}`,
      );
    const types = [...new Set(body.types)];
    if (!(await organizationRepository.findOfClient(this.db, principal.clientId, body.organizationId))) {
      throw new AppError('error_organization_not_found', { organizationId: body.organizationId });
    }
    // Resolves the host name: done before the change, so no transaction waits on DNS.
    try {
      await assertSafeWebhookUrl(body.url, this.options.allowPrivate);
    } catch (error) {
      if (error instanceof UnsafeTargetError) throw validationError('url', error.reason);
      throw error;
    }
    const secret = generateWebhookSecret();
    const { url, password } = splitUrlPassword(body.url);
    return this.changes.run(async (trx) => {
      const row = await webhookRepository.insert(trx, {
        client_id: principal.clientId,
        organization_id: body.organizationId,
        name: trimText(body.name),
        url,
        url_password: password === null ? null : this.secrets.seal(password),
        types,
        secret: this.secrets.seal(secret),
      });
      return presentCreatedWebhook(row, secret);
    });
  }

  /**
   * Deletes a subscription; its pending deliveries are cancelled in the same transaction, so nothing more is sent
   * (an attempt already in flight may still arrive).
   * @throws 404 `error_not_found` {entity: 'webhook', id}
   */
  async delete(principal: Principal, webhookId: number): Promise<void> {
    await this.changes.run(async (trx) => {
      if (!(await webhookRepository.softDelete(trx, principal.clientId, webhookId)))
        throw notFound('webhook', webhookId);
      await deliveryRepository.cancelPending(trx, principal.clientId, webhookId, 'subscription deleted');
    });
  }

  /**
   * Gives the subscription a new secret (P167). For `gracePeriodSeconds` (default 24 h) every delivery is signed
   * with the new and the replaced secret, so the receiver can switch at any moment in between; a rotation within
   * a grace period ends the older one (the secret replaced now is the only previous one).
   * @throws 404 `error_not_found` {entity: 'webhook', id}
   */
  async rotateSecret(
    principal: Principal,
    webhookId: number,
    body: SecretRotationBody = {},
  ): Promise<RotatedWebhook> {
    const secret = generateWebhookSecret();
    return this.changes.run(async (trx) => {
      const row = await webhookRepository.rotateSecret(
        trx,
        principal.clientId,
        webhookId,
        this.secrets.seal(secret),
        body.gracePeriodSeconds ?? DEFAULT_GRACE_PERIOD_SECONDS,
      );
      if (!row) throw notFound('webhook', webhookId);
      return presentRotatedWebhook(row, secret);
    });
  }

  /**
   * A page of the subscription's deliveries, newest first (D4), by `page` or after a `cursor` (P172).
   * @throws 404 `error_not_found` {entity: 'webhook', id}
   */
  async deliveries(
    principal: Principal,
    webhookId: number,
    query: DeliveriesQuery,
  ): Promise<WebhookDeliveryPage> {
    await this.requireWebhook(this.db, principal, webhookId);
    const limit = query.limit ?? 100;
    // One log per subscription: the cursor's list names it, so it is refused on another subscription's log.
    const scope = {
      list: `webhook.deliveries.${webhookId}`,
      clientId: principal.clientId,
      sortBy: 'ID',
      ascending: false,
    };
    const { page, after } = resolvePaging(this.cursors, query, scope);
    const read = await deliveryRepository.pageOfWebhook(
      this.db,
      principal.clientId,
      webhookId,
      limit,
      after === undefined ? { offset: (page - 1) * limit } : { afterId: after.id },
    );
    const { rows, nextCursor } = cutPage(this.cursors, scope, read, limit, page, (row) => ({
      value: null,
      id: row.id,
    }));
    return {
      rows: rows.map(presentDelivery),
      page,
      ...(query.count && {
        total: await deliveryRepository.countOfWebhook(this.db, principal.clientId, webhookId),
      }),
      ...(nextCursor !== undefined && { nextCursor }),
    };
  }

  /**
   * Schedules a new attempt of a delivery now, whatever its state (redelivery, D9.3). The attempt keeps the
   * event's `webhook-id`.
   * @throws 404 `error_not_found` for an unknown webhook or delivery
   * @throws 400 `error_webhook_disabled` when the receiver disabled the subscription with 410 Gone
   */
  async retry(principal: Principal, webhookId: number, deliveryId: number): Promise<WebhookDelivery> {
    return this.changes.run(async (trx, change) => {
      const webhook = await this.requireWebhook(trx, principal, webhookId);
      if (webhook.disabled_at !== null) throw new AppError('error_webhook_disabled', { id: webhookId });
      const delivery = await deliveryRepository.findOfWebhook(trx, principal.clientId, webhookId, deliveryId);
      if (!delivery) throw notFound('delivery', deliveryId);
      const reopened = await deliveryRepository.reopen(trx, principal.clientId, deliveryId);
      await this.queue.enqueue(trx, [
        { clientId: principal.clientId, deliveryId, attempts: reopened.attempts },
      ]);
      change.notify('webhook', WAKE_KEY);
      return presentDelivery({ ...reopened, type: delivery.type, entity_id: delivery.entity_id });
    });
  }

  private async requireWebhook(db: Kysely<DB>, principal: Principal, webhookId: number) {
    const webhook = await webhookRepository.findOfClient(db, principal.clientId, webhookId);
    if (!webhook) throw notFound('webhook', webhookId);
    return webhook;
  }
}
