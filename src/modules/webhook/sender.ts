/**
 * Sends one webhook request (D9.2): `POST` of the event's JSON body with the Standard Webhooks headers, signed
 * with the `standardwebhooks` library, over the outbound client of `src/connectors/http-client.ts` (keep-alive,
 * redirects never followed so a 3xx is a failed attempt, one time limit for the exchange, and the URL guard of
 * D9.4 unless private targets are allowed).
 */
import { Webhook } from 'standardwebhooks';
import { HttpClient } from '../../connectors/http-client.ts';

/** What is sent: the subscription's target and the event. */
export interface OutgoingWebhook {
  url: string;
  /**
   * `whsec_…` secrets of the subscription, current first: one signature each, space-separated in
   * `webhook-signature` (the previous one during a rotation's grace period, P167); never logged.
   */
  secrets: string[];
  /** The event id: the `webhook-id` header, the same on every attempt. */
  eventId: string;
  /** Event kind: the `webhook-event-type` header. */
  type: string;
  /** The exact JSON body. */
  payload: string;
}

/** The outcome of one attempt. */
export interface AttemptOutcome {
  /** A 2xx answer arrived in time. */
  delivered: boolean;
  /** HTTP status of the answer; null when none arrived (timeout, network error, refused target). */
  statusCode: number | null;
  /** Why the attempt failed (no secrets, no response bodies); null when delivered. */
  error: string | null;
  /** The answer's `Retry-After` in ms, read on 429 and 503 only (P168); undefined when absent or unreadable. */
  retryAfterMs?: number;
}

/** Statuses whose `Retry-After` is honoured (Standard Webhooks: rate limit and unavailability). */
const RETRY_AFTER_STATUSES = new Set([429, 503]);

/**
 * Reads a `Retry-After` value: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
 * @returns the delay in ms from `now` (0 for a date in the past); undefined when the value is not one of both
 */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) || !/[a-z]/i.test(text) ? undefined : Math.max(0, date - now.getTime());
}

/** The `user-agent` of every delivery. */
export const USER_AGENT = 'seller-ops-webhooks/1';

/** Sends webhook requests; one instance per process keeps the connection pools. */
export class WebhookSender {
  private readonly client: HttpClient;
  private readonly signers = new Map<string, Webhook>();

  private readonly clock: () => Date;

  constructor(options: {
    /** Limit for the whole exchange, in ms (D9.3: 10 s). */
    timeoutMs: number;
    /** `WEBHOOK_ALLOW_PRIVATE`: skip the address checks. */
    allowPrivate: boolean;
    /** The time an attempt is signed at (`webhook-timestamp`); default the system clock. */
    clock?: () => Date;
  }) {
    const { clock = () => new Date(), ...client } = options;
    this.clock = clock;
    this.client = new HttpClient({ ...client, userAgent: USER_AGENT, maxResponseBytes: 64 * 1024 });
  }

  /** Makes one attempt; never throws. */
  async send(message: OutgoingWebhook): Promise<AttemptOutcome> {
    const timestamp = this.clock();
    try {
      const { status, headers } = await this.client.request({
        method: 'POST',
        url: message.url,
        headers: {
          'content-type': 'application/json',
          'webhook-id': message.eventId,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': message.secrets
            .map((secret) => this.signer(secret).sign(message.eventId, timestamp, message.payload))
            .join(' '),
          'webhook-event-type': message.type,
        },
        body: message.payload,
      });
      if (status >= 200 && status < 300) return { delivered: true, statusCode: status, error: null };
      const retryAfterMs = RETRY_AFTER_STATUSES.has(status)
        ? parseRetryAfter(headers['retry-after'], new Date())
        : undefined;
      return {
        delivered: false,
        statusCode: status,
        error: `HTTP ${status}`,
        ...(retryAfterMs !== undefined && { retryAfterMs }),
      };
    } catch (error) {
      return {
        delivered: false,
        statusCode: null,
        error: error instanceof Error ? error.message : String(error),
      };
    }
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.client.close();
  }

  private signer(secret: string): Webhook {
    let signer = this.signers.get(secret);
    if (!signer) {
      signer = new Webhook(secret);
      if (this.signers.size > 10_000) this.signers.clear();
      this.signers.set(secret, signer);
    }
    return signer;
  }
}
