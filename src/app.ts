/**
 * Builds the HTTP application over a runtime; never listens (STYLE §1). `src/server.ts` listens.
 *
 * Request pipeline of the `/api` scope: request id → authentication and role (onRequest) → validation →
 * idempotency key (preHandler, `src/http/idempotency.ts`) → handler → presenter → stored answer and commit of an
 * idempotent request (onSend). Before all of it, on every route but the exempt ones, the rate limit counts the
 * request per token or IP address (onRequest, `src/http/rate-limit.ts`). In front of the framework, a plain GET
 * that a cache of this process can answer is answered at once (`src/http/cached-answers.ts`, P223).
 */
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Runtime } from './runtime.ts';
import { decorateAuthentication, installAuthentication } from './http/auth.ts';
import {
  installErrorHandlers,
  installShutdownAnswer,
  installStartUpAnswer,
  requestIdOf,
  sendAppError,
} from './http/error-handler.ts';
import { clientErrorHandler, installRequestAborts } from './http/client-disconnects.ts';
import { connectionLimits, edgeServerOptions, installConnectionLimits } from './http/connections.ts';
import { validationError } from './http/errors.ts';
import { transformRoute } from './http/openapi.ts';
import { finiteNumbersPlugin, installStrictInput } from './http/strict-input.ts';
import { IdempotencyKeys, installIdempotencyKeys } from './http/idempotency.ts';
import { installCompression } from './http/compression.ts';
import { installJsonBodyParser } from './http/json-body.ts';
import { installRateLimit, MemoryCounts } from './http/rate-limit.ts';
import { CachedAnswers } from './http/cached-answers.ts';
import { validatorFactory } from './http/validators.ts';
import { installLingeringClose } from './http/lingering-close.ts';
import { installRequestMetrics } from './metrics/http.ts';
import { ErrorResponse } from './http/schemas.ts';
import type { ResourceGroup } from './modules/group.ts';

/** Log levels at which Fastify writes a line for every request (`info` and below). */
const REQUEST_LOG_LEVELS = new Set(['trace', 'debug', 'info']);

/** Options of `buildApp`. */
export interface BuildAppOptions {
  /**
   * `false` disables logs (tests); `stream` sends the log lines there instead of standard output (tests reading
   * them), `level` overrides `LOG_LEVEL`.
   */
  logger?: boolean | { level?: string; stream?: { write(line: string): void } };
}

/**
 * Creates the Fastify app with the routes of `groups` (see `src/modules/index.ts`); call `ready()` or `listen()`
 * next.
 */
export async function buildApp(
  runtime: Runtime,
  groups: readonly ResourceGroup[],
  options: BuildAppOptions = {},
): Promise<FastifyInstance> {
  const { config } = runtime;
  const logger = typeof options.logger === 'object' ? options.logger : {};
  const cachedAnswers = new CachedAnswers();
  const app = Fastify({
    logger:
      options.logger === false
        ? false
        : {
            level: logger.level ?? config.logLevel,
            redact: ['req.headers.authorization', 'req.headers["x-admin-token"]'],
            ...(logger.stream && { stream: logger.stream }),
          },
    // Time limits of a request's arrival, keep-alive and trusted proxies (P164).
    ...edgeServerOptions(config, cachedAnswers),
    // The caller's x-request-id is kept only when it is short and printable (P33); otherwise a new UUID.
    requestIdHeader: false,
    genReqId: (request) => requestIdOf(request.headers['x-request-id']),
    bodyLimit: config.bodyLimitBytes,
    // Ids in paths are checked by their schemas; the router's own limit only guards against abuse.
    routerOptions: { maxParamLength: 1_000 },
    // While closing, requests get 503 in the error model from the hook below instead of Fastify's own body.
    return503OnClosing: false,
    frameworkErrors: (error, _request, reply) => {
      void sendAppError(reply, validationError('url', `malformed URL: ${error.message}`), 'ru');
    },
    clientErrorHandler: clientErrorHandler(runtime.metrics),
    // Query strings and paths are converted to their schemas' types, bodies are not (P219).
    schemaController: { compilersFactory: { buildValidator: validatorFactory() } },
    ajv: {
      customOptions: {
        coerceTypes: 'array',
        removeAdditional: false,
        useDefaults: true,
        allErrors: false,
        // Infinity and NaN are not numbers (`1e309` and `"Infinity"` never reach SQL).
        strictNumbers: true,
        // a catalog ParamValue.value is `type: [string, number, boolean]` (src/modules/catalog/parameters.ts)
        allowUnionTypes: true,
      },
      plugins: [finiteNumbersPlugin],
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  decorateAuthentication(app);
  installConnectionLimits(app, connectionLimits(config), config, runtime.metrics);
  installRequestAborts(app, runtime.metrics);
  installStrictInput(app);
  const closing = installShutdownAnswer(app);
  installStartUpAnswer(app, () => runtime.ready);
  installRequestMetrics(app, runtime.metrics);
  const memoryCounts = MemoryCounts.of(config);
  await installRateLimit(app, runtime, memoryCounts);
  cachedAnswers.enable({
    config,
    authenticator: runtime.authenticator,
    metrics: runtime.metrics,
    memoryCounts,
    routes: groups.flatMap((group) => group.cachedRoutes ?? []),
    serving: () => runtime.ready && !closing(),
    requestLogs: REQUEST_LOG_LEVELS.has(app.log.level),
  });
  installLingeringClose(app);

  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    // While shutting down, every answer ends its connection, that of a request already running too: none is left
    // idle for the listener's close to reset under a client sending its next request (P35).
    if (closing()) reply.header('connection', 'close');
    done(null, payload);
  });
  installJsonBodyParser(app);
  installErrorHandlers(app, config.bodyLimitBytes, runtime.authenticator);
  app.addSchema(ErrorResponse);
  await installCompression(app);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'seller-ops',
        version: '1.0',
        description:
          'Seller operations API: inbound receiving documents, webhooks and more. See README.md and docs/decisions.md.',
      },
      servers: [
        {
          url: config.publicBaseUrl || '/',
          description: config.publicBaseUrl ? 'PUBLIC_BASE_URL' : 'this service (relative)',
        },
      ],
      components: {
        securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'Authorization' } },
      },
      security: [{ token: [] }],
      tags: [
        {
          name: 'inbound',
          description: 'Warehouse receiving documents, their positions and cargo places (§4.1)',
        },
        { name: 'keyword', description: 'Keyword groups and their bindings to the catalog (§4.2)' },
        { name: 'receipt', description: 'Fiscal receipts of receiving documents (§4.3)' },
        { name: 'webhook', description: 'Webhook subscriptions and their delivery log (§4.4, §6)' },
        { name: 'tag', description: 'Product tags (§4.5)' },
        { name: 'campaign', description: 'Advertising campaigns, statistics and XLSX exports (§4.6)' },
        { name: 'catalog', description: 'Brands, categories, models and products (§4.7)' },
        { name: 'catalog dictionaries', description: "The marketplace's categories and parameters (§4.7)" },
        { name: 'task', description: 'Background tasks and their files (TmsTask, D10)' },
      ],
    },
    transform: transformRoute,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) =>
        typeof json.$id === 'string' ? json.$id : `def-${index}`,
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());

  for (const { scope, routes, prefix } of groups)
    if (scope === 'root' && routes) await app.register(routes, { prefix });
  await app.register(
    async (api) => {
      installAuthentication(api, runtime.authenticator);
      installIdempotencyKeys(api, new IdempotencyKeys(runtime.database.db, config, runtime.secrets));
      for (const { scope, routes, prefix } of groups)
        if (scope === 'api' && routes) await api.register(routes, { prefix });
    },
    { prefix: '/api' },
  );
  return app;
}
