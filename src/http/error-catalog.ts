/**
 * The catalog of every error code the API returns (spec §7, decision D3): HTTP status and the `ru`/`en`
 * message templates. Placeholders `{name}` (or `{0}`) are filled from the error's `params`.
 * A code is added here first, then thrown with `new AppError(code, params)`.
 */
export const errorCatalog = {
  auth_required: {
    status: 401,
    ru: 'Требуется авторизация: передайте действующий API-токен в заголовке Authorization',
    en: 'Authorization required: send a valid API token in the Authorization header',
  },
  error_access_denied: {
    status: 400,
    ru: 'Роль токена не позволяет выполнить эту операцию',
    en: 'The token role cannot perform this operation',
  },
  error_no_client: { status: 400, ru: 'Клиент не найден или удалён', en: 'Client not found or deleted' },
  error_validation: {
    status: 400,
    ru: 'Неверное значение поля {field}: {reason}',
    en: 'Invalid value of {field}: {reason}',
  },
  error_not_found: { status: 404, ru: 'Не найдено: {entity} {id}', en: 'Not found: {entity} {id}' },
  error_version_conflict: {
    status: 409,
    ru: 'Документ {id} уже изменён (текущая версия {currentVersionId}); перечитайте его и повторите',
    en: 'Document {id} was changed meanwhile (current version {currentVersionId}); read it again and retry',
  },
  error_order_deleted: {
    status: 400,
    ru: 'Документ {id} удалён; восстановите его, чтобы изменить',
    en: 'Document {id} is deleted; restore it to change it',
  },
  error_orders_not_found: {
    status: 404,
    ru: 'Документы не найдены или удалены: {ids}',
    en: 'Documents not found or deleted: {ids}',
  },
  error_organization_not_found: {
    status: 400,
    ru: 'Организация не найдена',
    en: 'Organization not found',
  },
  error_payload_too_large: {
    status: 413,
    ru: 'Тело запроса больше допустимого ({limit} байт)',
    en: 'Request body is larger than allowed ({limit} bytes)',
  },
  error_unsupported_media_type: {
    status: 415,
    ru: 'Тип содержимого {contentType} не поддерживается; используйте application/json',
    en: 'Content type {contentType} is not supported; use application/json',
  },
  error_rate_limited: {
    status: 429,
    ru: 'Слишком много запросов; повторите через {retryAfter} с',
    en: 'Too many requests; retry in {retryAfter} s',
  },
  error_idempotency_key_reuse: {
    status: 422,
    ru: 'Ключ идемпотентности уже использован с другим запросом',
    en: 'The idempotency key was already used with a different request',
  },
  error_idempotency_in_progress: {
    status: 409,
    ru: 'Запрос с этим ключом идемпотентности ещё выполняется',
    en: 'A request with this idempotency key is still in progress',
  },
  error_route_not_found: {
    status: 404,
    ru: 'Метод {method} {url} не существует',
    en: 'There is no operation {method} {url}',
  },
  error_webhook_disabled: {
    status: 400,
    ru: 'Вебхук {id} отключён: получатель ответил 410 Gone; создайте новую подписку',
    en: 'Webhook {id} is disabled: the receiver answered 410 Gone; create a new subscription',
  },
  error_unknown: {
    status: 500,
    ru: 'Внутренняя ошибка; изменяющий запрос не повторяйте вслепую',
    en: 'Internal error; do not retry a mutation blindly',
  },
} as const satisfies Record<string, { status: number; ru: string; en: string }>;

/** A stable machine-readable error code (spec §7 `error`). */
export type ErrorCode = keyof typeof errorCatalog;

/** Language of `localMessage`: the token user's `lang`, Russian when none is set (spec §5.4). */
export type Lang = 'ru' | 'en';

/** Fills `{name}` placeholders of the code's template in `lang` from `params`. */
export function renderMessage(code: ErrorCode, lang: Lang, params: Record<string, unknown>): string {
  return errorCatalog[code][lang].replace(/\{(\w+)\}/g, (match, name: string) => {
    const value = params[name];
    if (value === undefined || value === null) return match;
    if (Array.isArray(value)) return value.join(', ');
    if (typeof value === 'string') return value;
    return typeof value === 'bigint' ? value.toString() : JSON.stringify(value);
  });
}
