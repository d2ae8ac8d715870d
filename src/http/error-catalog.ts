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
  error_empty_group_name: {
    status: 400,
    ru: 'Не указано название группы',
    en: 'The group name is empty',
  },
  error_empty_keywords_groups: {
    status: 400,
    ru: 'Группа ключевых слов пуста',
    en: 'The keyword group is empty',
  },
  error_need_at_least_two_groups: {
    status: 400,
    ru: 'Для объединения нужны как минимум две группы',
    en: 'At least two groups are required',
  },
  error_tag_id_and_name_required: {
    status: 400,
    ru: 'Требуются идентификатор и название тега',
    en: 'Tag id and name are required',
  },
  error_tag_id_required: { status: 400, ru: 'Требуется идентификатор тега', en: 'Tag id is required' },
  error_tag_update_failed: {
    status: 400,
    ru: 'Не удалось обновить тег с идентификатором {0}',
    en: 'Failed to update the tag with id {0}',
  },
  error_duplicate_tag_name: {
    status: 400,
    ru: 'Тег с таким названием уже существует: {0}',
    en: 'A tag with this name already exists: {0}',
  },
  error_tag_name_required: { status: 400, ru: 'Требуется название тега', en: 'Tag name is required' },
  error_duplicate_tag_association: {
    status: 400,
    ru: 'Тег уже привязан к этому товару',
    en: 'The tag is already associated with the product',
  },
  error_tag_and_product_id_required: {
    status: 400,
    ru: 'Требуются идентификаторы тега и товара',
    en: 'Tag id and product id are required',
  },
  error_tag_and_model_id_required: {
    status: 400,
    ru: 'Требуются идентификаторы тега и модели',
    en: 'Tag id and model id are required',
  },
  error_duplicate_name: {
    status: 400,
    ru: '{entity} с названием «{name}» уже существует (id {id})',
    en: '{entity} named "{name}" already exists (id {id})',
  },
  error_duplicate_article: {
    status: 400,
    ru: 'Модель с артикулом {article} уже существует (id {id})',
    en: 'A model with article {article} already exists (id {id})',
  },
  error_prepared_integration_not_found: {
    status: 400,
    ru: 'Подготовленная интеграция не найдена',
    en: 'Prepared integration not found',
  },
  error_subscription_expired: {
    status: 400,
    ru: 'Подписка истекла, необходимо оплатить тариф',
    en: 'The subscription has expired; the tariff must be paid',
  },
  error_token_expired_or_revoked: {
    status: 400,
    ru: 'Токен внешнего API отозван или введён неверно',
    en: 'The external API token is revoked or entered incorrectly',
  },
  error_market1_api: {
    status: 400,
    ru: 'Ошибка маркетплейса: {message}',
    en: 'Marketplace error: {message}',
  },
  error_market1_unavailable: {
    status: 503,
    ru: 'Маркетплейс Market1 сейчас недоступен ({reason}); повторите позже',
    en: 'Market1 is unavailable right now ({reason}); try again later',
  },
  error_analytics_access_denied: {
    status: 400,
    ru: 'Аналитика конфиденциальна для роли SUPPORT',
    en: 'Analytics is confidential for the SUPPORT role',
  },
  error_no_marketplace: { status: 400, ru: 'Не указан маркетплейс', en: 'Marketplace not specified' },
  error_no_organization: { status: 400, ru: 'Не указана организация', en: 'Organization not specified' },
  error_unsupported_service: {
    status: 400,
    ru: 'Маркетплейс не поддерживается',
    en: 'Marketplace not supported',
  },
  error_user_does_not_have_this_organization: {
    status: 400,
    ru: 'У пользователя нет доступа к организации',
    en: 'The user has no access to the organization',
  },
  error_service_not_supported: { status: 400, ru: 'Сервис не поддерживается', en: 'Service not supported' },
  error_cash_register_not_configured: {
    status: 400,
    ru: 'Для организации не настроена касса',
    en: 'No cash register is configured for the organization',
  },
  error_receipt_already_exists: {
    status: 400,
    ru: 'У документа уже есть действующий чек {receiptType}',
    en: 'The document already has a live {receiptType} receipt',
  },
  error_receipt_refund_not_allowed: {
    status: 400,
    ru: 'Возврат {receiptType} требует завершённого чека {requiredType}',
    en: '{receiptType} needs a completed {requiredType} receipt',
  },
  error_cash_register_credentials_refused: {
    status: 400,
    ru: 'Оператор фискальных данных отклонил логин и пароль кассы организации {organizationId}; исправьте настройки кассы, чек {id} будет отправлен повторно',
    en: 'The fiscal data operator refused the cash-register login and password of organization {organizationId}; correct the settings, receipt {id} will be sent again',
  },
  error_cash_register_unavailable: {
    status: 503,
    ru: 'Оператор фискальных данных недоступен; чек будет отправлен повторно',
    en: 'The fiscal data operator is unavailable; the receipt will be sent again',
  },
  error_task_not_cancellable: {
    status: 400,
    ru: 'Задачу {id} в статусе {status} нельзя отменить',
    en: 'Task {id} in status {status} cannot be cancelled',
  },
  error_headers_too_large: {
    status: 431,
    ru: 'Заголовки или адрес запроса слишком велики',
    en: 'The request headers or URL are too large',
  },
  error_request_timeout: {
    status: 408,
    ru: 'Запрос не пришёл целиком вовремя; соединение закрыто',
    en: 'The request did not arrive in time; the connection is closed',
  },
  error_service_unavailable: {
    status: 503,
    ru: 'Сервис запускается или останавливается; повторите запрос',
    en: 'The service is starting or shutting down; retry the request',
  },
  error_unknown: {
    status: 500,
    ru: 'Внутренняя ошибка; изменяющий запрос не повторяйте вслепую',
    en: 'Internal error; do not retry a mutation blindly',
  },
  // The message of a task that failed unexpectedly on every run or lost its process (P84); never an HTTP answer.
  error_task_failed: {
    status: 500,
    ru: 'Задача не выполнена: внутренний сбой при каждой попытке ({attempts})',
    en: 'The task failed: an internal failure on every attempt ({attempts})',
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
