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
  /** `whsec_…` secret of the subscription; used to sign, never logged. */
  secret: string;
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
}

/** The `user-agent` of every delivery. */
export const USER_AGENT = 'seller-ops-webhooks/1';

/** Sends webhook requests; one instance per process keeps the connection pools. */
export class WebhookSender {
  private readonly client: HttpClient;
  private readonly signers = new Map<string, Webhook>();

  constructor(options: {
    /** Limit for the whole exchange, in ms (D9.3: 10 s). */
    timeoutMs: number;
    /** `WEBHOOK_ALLOW_PRIVATE`: skip the address checks. */
    allowPrivate: boolean;
  }) {
    this.client = new HttpClient({ ...options, userAgent: USER_AGENT, maxResponseBytes: 64 * 1024 });
  }

  /** Makes one attempt; never throws. */
  async send(message: OutgoingWebhook): Promise<AttemptOutcome> {
    const timestamp = new Date();
    try {
      const { status } = await this.client.request({
        method: 'POST',
        url: message.url,
        headers: {
          'content-type': 'application/json',
          'webhook-id': message.eventId,
          'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
          'webhook-signature': this.signer(message.secret).sign(message.eventId, timestamp, message.payload),
          'webhook-event-type': message.type,
        },
        body: message.payload,
      });
      return status >= 200 && status < 300
        ? { delivered: true, statusCode: status, error: null }
        : { delivered: false, statusCode: status, error: `HTTP ${status}` };
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
