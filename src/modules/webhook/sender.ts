/**
 * Sends one webhook request (D9.2): `POST` of the event's JSON body with the Standard Webhooks headers, signed
 * with the `standardwebhooks` library, over keep-alive connections. Redirects are never followed (a 3xx is a
 * failed attempt), the whole exchange has `timeoutMs`, and the connection goes only to an address that passed
 * the URL guard (D9.4) unless private targets are allowed.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { assertPublicAddress, guardedLookup, UnsafeTargetError } from './url-guard.ts';

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
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 });
  private readonly signers = new Map<string, Webhook>();

  constructor(
    private readonly options: {
      /** Limit for the whole exchange, in ms (D9.3: 10 s). */
      timeoutMs: number;
      /** `WEBHOOK_ALLOW_PRIVATE`: skip the address checks. */
      allowPrivate: boolean;
    },
  ) {}

  /** Makes one attempt; never throws. */
  async send(message: OutgoingWebhook): Promise<AttemptOutcome> {
    let url: URL;
    try {
      url = new URL(message.url);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (!this.options.allowPrivate && isIP(host)) assertPublicAddress(host);
    } catch (error) {
      return { delivered: false, statusCode: null, error: describe(error, this.options.timeoutMs) };
    }
    const timestamp = new Date();
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': message.eventId,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': this.signer(message.secret).sign(message.eventId, timestamp, message.payload),
      'webhook-event-type': message.type,
    };
    const body = Buffer.from(message.payload, 'utf8');
    const secure = url.protocol === 'https:';
    return new Promise<AttemptOutcome>((resolve) => {
      let settled = false;
      const settle = (outcome: AttemptOutcome) => {
        if (settled) return;
        settled = true;
        resolve(outcome);
      };
      const request = (secure ? https : http).request(
        url,
        {
          method: 'POST',
          agent: secure ? this.httpsAgent : this.httpAgent,
          headers: { ...headers, 'content-length': String(body.length) },
          signal: AbortSignal.timeout(this.options.timeoutMs),
          ...(!this.options.allowPrivate && { lookup: guardedLookup }),
        },
        (response) => {
          const statusCode = response.statusCode ?? 0;
          response.on('error', (error) =>
            settle({ delivered: false, statusCode, error: describe(error, this.options.timeoutMs) }),
          );
          response.on('end', () =>
            settle(
              statusCode >= 200 && statusCode < 300
                ? { delivered: true, statusCode, error: null }
                : { delivered: false, statusCode, error: `HTTP ${statusCode}` },
            ),
          );
          // The body is not used; reading it frees the keep-alive connection.
          response.resume();
        },
      );
      request.on('error', (error) =>
        settle({ delivered: false, statusCode: null, error: describe(error, this.options.timeoutMs) }),
      );
      request.end(body);
    });
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
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

function describe(error: unknown, timeoutMs: number): string {
  if (error instanceof UnsafeTargetError) return `target refused: ${error.reason}`;
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return `timeout after ${timeoutMs} ms`;
    const code = (error as NodeJS.ErrnoException).code;
    return code ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
