/**
 * Idempotency keys of the `/api` mutations (D3.2; decisions P120–P124; docs/operations.md "Idempotency keys").
 *
 * A `POST`, `PUT`, `PATCH` or `DELETE` with `Idempotency-Key` (1–255 printable ASCII characters) is handled once
 * per client and key:
 * - `preHandler` (after authentication and validation) claims the key in a short transaction of its own: a new key
 *   is claimed; a key with a stored answer and the same request (method, path, query, body) is answered from the
 *   store with `Idempotent-Replayed: true`; the same key with another request is 422
 *   `error_idempotency_key_reuse`; a key whose request is still running is 409 `error_idempotency_in_progress`.
 * - The claiming request runs with a `RequestCommit` (`src/changes/request-commit.ts`): its changes do not commit
 *   when the service returns; their transaction locks the key's row first, so every process sees the request in
 *   flight for as long as it runs.
 * - `onSend` sees the serialized answer: it stores it in the change's transaction and commits before the bytes go
 *   out (a failed commit answers 500 instead, and nothing is stored or changed). Which answers are stored: P121.
 * A claim whose process died is taken over by a repeat once its lease (`IDEMPOTENCY_LOCK_SECONDS`) has passed:
 * nothing of it committed, so the request simply runs again. Keys are kept `IDEMPOTENCY_RETENTION_SECONDS` (24 h),
 * then purged by a job (`idempotency-purge.ts`).
 */
import { createHash, randomUUID } from 'node:crypto';
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onResponseHookHandler,
  onSendHookHandler,
  preHandlerHookHandler,
} from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { RequestCommit, type CommitGuard } from '../changes/request-commit.ts';
import type { SecretBox } from '../security/secret-box.ts';
import { AppError, validationError } from './errors.ts';
import { idempotencyRepository, type Claim, type StoredAnswer } from './idempotency.repository.ts';
import { hooksOf } from './route-hooks.ts';

/** The request header carrying the key (IETF draft "The Idempotency-Key HTTP Header Field"). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** The response header marking an answer served from the store. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** Methods whose requests honour the header; GET and HEAD ignore it (D3.2). */
const MUTATIONS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** 1–255 printable ASCII characters (space included), taken verbatim (P120). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;
/** Errors of validation or authorization: never stored, even when the change had started (P121). */
const UNSTORED_ERRORS = new Set(['error_validation', 'error_access_denied', 'auth_required']);

/**
 * The key of a request's header.
 * @returns undefined when the header is absent
 * @throws 400 `error_validation` `{field: 'Idempotency-Key'}` unless it is 1–255 printable ASCII characters
 */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !KEY_PATTERN.test(header))
    throw validationError(IDEMPOTENCY_KEY_HEADER, 'must be 1–255 printable ASCII characters');
  return header;
}

/**
 * SHA-256 of what makes two requests "the same request" (P120): method, path with its query string as sent,
 * and the body as parsed and validated (so whitespace and number spelling do not matter; key order does).
 */
export function requestFingerprint(method: string, url: string, body: unknown): Buffer {
  return createHash('sha256')
    .update(`${method}\n${url}\n`)
    .update(JSON.stringify(body ?? null))
    .digest();
}

/** What claiming a key found. */
export type ClaimOutcome =
  | {
      kind: 'claimed';
      claim: Claim;
      /** The claim of a request that died was taken over. */
      takenOver: boolean;
      resumed: { checkpoint: unknown } | undefined;
    }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'reuse' }
  | { kind: 'in-progress' };

/** Settings of the idempotency keys (`src/config.ts`). */
export interface IdempotencySettings {
  idempotencyRetentionSeconds: number;
  idempotencyLockSeconds: number;
}

/**
 * Claims, stores and releases idempotency keys on one database. Stored bodies are sealed with the operator key
 * (P160): an answer may carry a secret shown only once (a webhook's signing secret), and a replay must repeat it.
 */
export class IdempotencyKeys {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly settings: IdempotencySettings,
    private readonly secrets: SecretBox,
  ) {}

  /**
   * Claims `key` of `clientId` for a request with `fingerprint`, or finds why it cannot (see `ClaimOutcome`).
   * An expired key counts as unused; a claim whose request died is taken over (P121).
   * @throws SecretOpenError when a stored answer cannot be opened (the operator key changed)
   */
  async claim(clientId: number, key: string, fingerprint: Buffer): Promise<ClaimOutcome> {
    const token = randomUUID();
    // A second round is needed only when the row changed under us (released, expired, purged).
    for (let round = 0; round < 3; round++) {
      const id = await idempotencyRepository.claim(this.db, {
        clientId,
        key,
        fingerprint,
        token,
        leaseSeconds: this.settings.idempotencyLockSeconds,
        retentionSeconds: this.settings.idempotencyRetentionSeconds,
      });
      if (id !== undefined)
        return { kind: 'claimed', claim: { clientId, id, token }, takenOver: false, resumed: undefined };
      const found = await idempotencyRepository.find(this.db, clientId, key);
      if (!found) continue;
      if (found.expired) {
        await idempotencyRepository.deleteExpired(this.db, clientId, found.id);
        continue;
      }
      if (!found.fingerprint.equals(fingerprint)) return { kind: 'reuse' };
      if (found.answer)
        return {
          kind: 'replay',
          answer: { ...found.answer, body: this.secrets.openBytes(found.answer.body) },
        };
      if (found.leased) return { kind: 'in-progress' };
      const taken = await idempotencyRepository.takeOver(
        this.db,
        { clientId, id: found.id, token: found.token },
        token,
        this.settings.idempotencyLockSeconds,
      );
      if (!taken) return { kind: 'in-progress' };
      return {
        kind: 'claimed',
        claim: { clientId, id: found.id, token },
        takenOver: true,
        resumed: taken.committedEarly ? { checkpoint: taken.checkpoint } : undefined,
      };
    }
    return { kind: 'in-progress' };
  }

  /** The guard of a claiming request's transactions: lock the claim first, record early commits. */
  guard(claim: Claim): CommitGuard {
    return {
      begin: async (trx) => {
        if (!(await idempotencyRepository.lock(trx, claim)))
          throw new AppError('error_idempotency_in_progress');
      },
      beforeEarlyCommit: async (trx, checkpoint) => {
        if (
          !(await idempotencyRepository.recordCheckpoint(
            trx,
            claim,
            checkpoint,
            this.settings.idempotencyLockSeconds,
          ))
        )
          throw new AppError('error_idempotency_in_progress');
      },
    };
  }

  /**
   * Ends a claiming request once its answer is serialized (P121): commits its pending changes with the stored
   * answer, or stores the answer alone, or releases the key, or — for a 5xx before the commit — rolls back.
   * @throws when the commit or the store fails (the key is released; the caller answers 500)
   */
  async finish(claim: Claim, commit: RequestCommit, answer: StoredAnswer): Promise<void> {
    const sealed = { ...answer, body: this.secrets.sealBytes(answer.body) };
    try {
      if (commit.pending && answer.status < 500) {
        await commit.commit(async (trx) => {
          if (!(await idempotencyRepository.storeAnswer(trx, claim, sealed)))
            throw new Error('the idempotency key was taken over while its request held it locked');
        });
        return;
      }
      await commit.rollback();
      if (isStored(answer, commit)) await idempotencyRepository.storeAnswer(this.db, claim, sealed);
      else await idempotencyRepository.release(this.db, claim);
    } catch (error) {
      await commit.rollback().catch(() => undefined);
      await idempotencyRepository.release(this.db, claim);
      throw error;
    }
  }

  /** Ends a claiming request that never reached `finish`: rolls back and releases its key. */
  async abandon(claim: Claim, commit: RequestCommit): Promise<void> {
    await commit.rollback().catch(() => undefined);
    await idempotencyRepository.release(this.db, claim);
  }
}

/**
 * Whether an answer is stored when no change waits for it (P121): after an early commit always; 2xx always;
 * 5xx never; other errors when the request's change had begun, unless they are validation or authorization errors.
 */
function isStored(answer: StoredAnswer, commit: RequestCommit): boolean {
  if (commit.committedEarly || answer.status < 400) return true;
  if (answer.status >= 500 || !commit.changeStarted) return false;
  return !UNSTORED_ERRORS.has(errorCodeOf(answer.body));
}

/** The `error` of an error body, or '' when the body is not one. */
function errorCodeOf(body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: unknown };
    return typeof parsed.error === 'string' ? parsed.error : '';
  } catch {
    return '';
  }
}

/** The answer to store, from the serialized reply; undefined for a payload that is not bytes (a stream). */
function answerOf(reply: FastifyReply, payload: unknown): StoredAnswer | undefined {
  const contentType = reply.getHeader('content-type');
  const answer = (body: Buffer): StoredAnswer => ({
    status: reply.statusCode,
    contentType: contentType === undefined ? null : String(contentType),
    body,
  });
  if (payload === undefined || payload === null) return answer(Buffer.alloc(0));
  if (typeof payload === 'string') return answer(Buffer.from(payload, 'utf8'));
  if (Buffer.isBuffer(payload)) return answer(payload);
  return undefined;
}

/** Sends a stored answer: its status, content type and body, marked `Idempotent-Replayed: true`. */
function replay(reply: FastifyReply, answer: StoredAnswer): void {
  reply.code(answer.status).header(REPLAYED_HEADER, 'true');
  if (answer.contentType !== null) reply.header('content-type', answer.contentType);
  if (answer.body.length === 0 && answer.contentType === null) reply.send();
  else reply.send(answer.body);
}

/** A request holding a claim, until its answer is sent. */
interface ClaimingRequest {
  claim: Claim;
  commit: RequestCommit;
}

/**
 * Installs the idempotency hooks on the routes of the `/api` scope that accept a mutation method (P14: a
 * `preHandler` after authentication and validation, before the route's own; the `onSend` before the compression's).
 * A GET or HEAD route carries none of them (D3.2), so a read passes no idempotency code at all.
 */
export function installIdempotencyKeys(api: FastifyInstance, keys: IdempotencyKeys): void {
  const claiming = new WeakMap<FastifyRequest, ClaimingRequest>();

  const preHandler: preHandlerHookHandler = (request, reply, done) => {
    // A route of several methods may carry the hooks: its reads still pass.
    if (!MUTATIONS.has(request.method)) return done();
    let key: string | undefined;
    try {
      key = idempotencyKeyOf(request.headers['idempotency-key']);
    } catch (error) {
      return done(error as AppError);
    }
    if (key === undefined) return done();
    const fingerprint = requestFingerprint(request.method, request.url, request.body);
    void keys.claim(request.principal.clientId, key, fingerprint).then((outcome) => {
      switch (outcome.kind) {
        case 'replay':
          return replay(reply, outcome.answer);
        case 'reuse':
          return done(new AppError('error_idempotency_key_reuse'));
        case 'in-progress':
          return done(new AppError('error_idempotency_in_progress'));
        case 'claimed': {
          if (outcome.takenOver)
            request.log.warn(
              { idempotencyKey: key, resumed: outcome.resumed !== undefined },
              'idempotency key: the request holding it died; this repeat runs it again',
            );
          const commit = new RequestCommit(keys.guard(outcome.claim), outcome.resumed);
          claiming.set(request, { claim: outcome.claim, commit });
          // The handler runs inside: its changes find this request's commit (AsyncLocalStorage).
          return commit.enter(() => done());
        }
      }
    }, done);
  };

  // Callback hooks: a request without a claim passes without a promise.
  const onSend: onSendHookHandler = (request, reply, payload, done) => {
    const state = claiming.get(request);
    if (!state) return done(null, payload);
    claiming.delete(request);
    finishClaim(keys, state, answerOf(reply, payload)).then(() => done(null, payload), done);
  };

  // Only when onSend never ran for a claiming request (a hijacked reply): leave nothing open.
  const onResponse: onResponseHookHandler = (request, _reply, done) => {
    const state = claiming.get(request);
    if (!state) return done();
    claiming.delete(request);
    keys.abandon(state.claim, state.commit).then(() => done(), done);
  };

  api.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((method) => MUTATIONS.has(method))) return;
    route.preHandler = [preHandler, ...hooksOf(route.preHandler)];
    route.onSend = [onSend, ...hooksOf(route.onSend)];
    route.onResponse = [onResponse, ...hooksOf(route.onResponse)];
  });
}

/**
 * Stores the answer of a claiming request with its changes (one commit).
 * @throws when the answer is not a string, bytes or empty (the claim is abandoned first), or when storing fails
 *   (everything rolls back and the key is released; Fastify's error handler then answers 500)
 */
async function finishClaim(
  keys: IdempotencyKeys,
  state: ClaimingRequest,
  answer: ReturnType<typeof answerOf>,
): Promise<void> {
  if (!answer) {
    await keys.abandon(state.claim, state.commit);
    throw new Error('an answer to a request with an idempotency key must be a string, bytes or empty');
  }
  await keys.finish(state.claim, state.commit, answer);
}
