/**
 * The outbound HTTP client of every external system the service calls (webhook receivers, cash-register
 * providers, marketplaces): keep-alive connection pools, one time limit for the whole exchange, redirects never
 * followed (a 3xx is returned as it is), and — unless `allowPrivate` — connections only to public addresses
 * (the URL guard of D9.4, checked on the address actually connected to, so DNS rebinding has no window). With
 * `allowPrivate`, link-local and cloud metadata addresses and names are still refused (P165).
 *
 * It never logs: callers decide what of a request is safe to record (no tokens, secrets or keys).
 */
import http from 'node:http';
import https from 'node:https';
import {
  assertConnectableUrl,
  guardedLookup,
  metadataGuardedLookup,
  UnsafeTargetError,
} from './url-guard.ts';

/** Settings of one client. */
export interface HttpClientOptions {
  /** Limit for the whole exchange (connect, send, headers and body), in ms. */
  timeoutMs: number;
  /**
   * Allow loopback and private targets (operator-configured URLs, sandboxes, tests); link-local and cloud
   * metadata targets are refused all the same.
   */
  allowPrivate: boolean;
  /** Largest response body kept, in bytes (default 8 MiB); a larger one fails the request. */
  maxResponseBytes?: number;
  /** `user-agent` header of every request. */
  userAgent: string;
}

/** One request. */
export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string | URL;
  headers?: Record<string, string>;
  /** Request body; a non-string is sent as JSON with `content-type: application/json`. */
  body?: string | Buffer | object;
  /** Overrides the client's time limit for this request, in ms. */
  timeoutMs?: number;
}

/** An answer: any status (3xx, 4xx and 5xx included). */
export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The body as UTF-8 text. */
  text: string;
  /** The body parsed as JSON; throws `SyntaxError` when it is not JSON. */
  json<T = unknown>(): T;
}

/** The request got no answer: time-out, refused or reset connection, refused target, oversized body. */
export class HttpTransportError extends Error {
  constructor(
    message: string,
    /** `timeout`, `refused_target`, `too_large` or `network`. */
    readonly kind: 'timeout' | 'refused_target' | 'too_large' | 'network',
  ) {
    super(message);
    this.name = 'HttpTransportError';
  }
}

/** An outbound HTTP client; one instance per connector keeps its connection pools. */
export class HttpClient {
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 256, maxFreeSockets: 256 });

  constructor(private readonly options: HttpClientOptions) {}

  /**
   * Sends one request and reads the whole answer.
   * @throws HttpTransportError when no complete answer arrived in time (never for an HTTP status)
   */
  async request(request: HttpRequest): Promise<HttpResponse> {
    const timeoutMs = request.timeoutMs ?? this.options.timeoutMs;
    let url: URL;
    try {
      url = new URL(request.url);
      assertConnectableUrl(url, this.options.allowPrivate);
    } catch (error) {
      throw transportError(error, timeoutMs);
    }
    const headers: Record<string, string> = { 'user-agent': this.options.userAgent, ...request.headers };
    let body: Buffer | undefined;
    if (typeof request.body === 'string') body = Buffer.from(request.body, 'utf8');
    else if (Buffer.isBuffer(request.body)) body = request.body;
    else if (request.body !== undefined) {
      body = Buffer.from(JSON.stringify(request.body), 'utf8');
      headers['content-type'] ??= 'application/json';
    }
    if (body) headers['content-length'] = String(body.length);
    const secure = url.protocol === 'https:';
    const limit = this.options.maxResponseBytes ?? 8 * 1024 * 1024;

    return new Promise<HttpResponse>((resolve, reject) => {
      let settled = false;
      const fail = (error: unknown) => {
        if (settled) return;
        settled = true;
        reject(transportError(error, timeoutMs));
      };
      const outgoing = (secure ? https : http).request(
        url,
        {
          method: request.method,
          agent: secure ? this.httpsAgent : this.httpAgent,
          headers,
          signal: AbortSignal.timeout(timeoutMs),
          lookup: this.options.allowPrivate ? metadataGuardedLookup : guardedLookup,
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > limit) {
              response.destroy();
              fail(new HttpTransportError(`response body over ${limit} bytes`, 'too_large'));
              return;
            }
            chunks.push(chunk);
          });
          response.on('error', fail);
          response.on('end', () => {
            if (settled) return;
            settled = true;
            const text = Buffer.concat(chunks).toString('utf8');
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              text,
              json: <T>() => JSON.parse(text) as T,
            });
          });
        },
      );
      outgoing.on('error', fail);
      outgoing.end(body);
    });
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

function transportError(error: unknown, timeoutMs: number): HttpTransportError {
  if (error instanceof HttpTransportError) return error;
  if (error instanceof UnsafeTargetError)
    return new HttpTransportError(`target refused: ${error.reason}`, 'refused_target');
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError')
      return new HttpTransportError(`timeout after ${timeoutMs} ms`, 'timeout');
    // The code alone (ECONNREFUSED, ENOTFOUND…): Node's message names the address, which a receipt's or a
    // delivery's error text must not show its client (a provider's address is the operator's).
    const code = (error as NodeJS.ErrnoException).code;
    return new HttpTransportError(code ? `network error ${code}` : 'network error', 'network');
  }
  return new HttpTransportError(String(error), 'network');
}
