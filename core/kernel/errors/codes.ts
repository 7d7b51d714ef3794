// The one error table: every error the API answers, its HTTP status, and its message in
// English and Arabic. Codes are stable: clients switch on them. `docs/errors.md` lists them
// and a test keeps the two in step.
export interface ErrorCodeEntry {
  status: number;
  /** When the code is answered; goes into the docs and the OpenAPI document. */
  description: string;
  en: string;
  ar: string;
}

export const errorCodes = {
  VALIDATION_ERROR: {
    status: 400,
    description: 'A request value breaks a rule; `details` names each field (JSON pointer), the rule and its limit.',
    en: 'The request is not valid: {{summary}}',
    ar: 'الطلب غير صالح: {{summary}}',
  },
  BAD_REQUEST: {
    status: 400,
    description: 'The request cannot be read: malformed JSON, an empty JSON body, JSON nested too deep, a bad Content-Length or chunk, bare-LF line endings, no Host header; `details[0].reason` says which.',
    en: 'The request cannot be read: {{reason}}',
    ar: 'تعذّرت قراءة الطلب: {{reason}}',
  },
  COMPANY_REQUIRED: {
    status: 400,
    description: 'The `X-Company-Id` header is missing.',
    en: 'The X-Company-Id header is required.',
    ar: 'الترويسة X-Company-Id مطلوبة.',
  },
  UNAUTHENTICATED: {
    status: 401,
    description: 'The bearer key is missing, unknown, revoked or expired (`details[0].reason` says which).',
    en: 'A valid API key is required.',
    ar: 'يلزم مفتاح واجهة برمجية صالح.',
  },
  FORBIDDEN: {
    status: 403,
    description: "The key's company, role or scopes do not reach what the route needs; `details` names the permission (or, for a transition limited to some roles, `reason: roles` and the roles).",
    en: 'This key is not allowed to do that.',
    ar: 'هذا المفتاح غير مسموح له بذلك.',
  },
  NOT_FOUND: {
    status: 404,
    description: 'No such route, or no such record in this company.',
    en: 'Not found.',
    ar: 'غير موجود.',
  },
  APP_NOT_ENABLED: {
    status: 404,
    description: 'The route belongs to an app that is not installed, or is disabled, in this company.',
    en: 'The app "{{app}}" is not enabled in this company.',
    ar: 'التطبيق "{{app}}" غير مفعّل في هذه الشركة.',
  },
  METHOD_NOT_ALLOWED: {
    status: 405,
    description: 'The path exists but not with this method; the `Allow` header lists the methods.',
    en: 'Method {{method}} is not allowed here.',
    ar: 'الطريقة {{method}} غير مسموح بها هنا.',
  },
  REQUEST_TIMEOUT: {
    status: 408,
    description: 'The request headers or the whole request did not arrive in time; `details` gives `reason` (`headers` or `request`) and `limitMs`. The connection is closed.',
    en: 'The request took too long to arrive.',
    ar: 'استغرق وصول الطلب وقتًا طويلًا.',
  },
  CONFLICT: {
    status: 409,
    description: 'The request conflicts with the current state: a duplicate, a transition not allowed from this state or whose guard does not hold (`reason: guard`), a document or field locked in its state (`reason: locked`), a delete of a document other documents still name (`reason: referenced`, one per kind of referrer), an idempotency key reused with another body.',
    en: 'The request conflicts with the current state: {{reason}}',
    ar: 'يتعارض الطلب مع الحالة الحالية: {{reason}}',
  },
  APP_REFUSED: {
    status: 409,
    description: 'An app lifecycle step is refused: version outside the host range, missing dependency, dependency cycle, duplicate id, a claimed event prefix, a dependent app still installed; `details` lists every reason.',
    en: 'The app step was refused: {{reason}}',
    ar: 'رُفضت خطوة التطبيق: {{reason}}',
  },
  CURSOR_EXPIRED: {
    status: 410,
    description: 'A cursor of the events API (or the `Last-Event-ID` of the event stream) points before the retention window (`DIWAN_EVENT_RETENTION_DAYS`): events after it may have been pruned. `details` give `retentionDays` and `oldestKept`; list again from a time (`from`) to catch up with what is kept.',
    en: 'The cursor has expired: events older than {{days}} days are pruned.',
    ar: 'انتهت صلاحية المؤشر: تُحذف الأحداث الأقدم من {{days}} يومًا.',
  },
  MANIFEST_INVALID: {
    status: 422,
    description: 'An app manifest or package is invalid or tampered with; `details` lists every problem (JSON pointer and rule).',
    en: 'The app manifest is not valid ({{count}} problems).',
    ar: 'بيان التطبيق غير صالح (عدد المشكلات: {{count}}).',
  },
  PAYLOAD_TOO_LARGE: {
    status: 413,
    description: 'The request body is larger than the limit.',
    en: 'The request body is larger than {{limit}} bytes.',
    ar: 'حجم محتوى الطلب أكبر من {{limit}} بايت.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    description: 'The body is not `application/json`.',
    en: 'The request body must be application/json.',
    ar: 'يجب أن يكون محتوى الطلب من النوع application/json.',
  },
  RATE_LIMITED: {
    status: 429,
    description: 'Too many requests for this key, too many failed authentications from this address, or too many event streams open for the company (`details[0].reason: "streams"`); retry after the `Retry-After` header.',
    en: 'Too many requests; retry in {{seconds}} seconds.',
    ar: 'طلبات كثيرة جدًا؛ أعد المحاولة بعد {{seconds}} ثانية.',
  },
  APP_ERROR: {
    status: 500,
    description: "An app's code failed or broke a host rule (emitting outside its event family, reaching a type it does not depend on); `details` name the app and the rule. The app's author has to fix it.",
    en: 'The app "{{app}}" failed: {{reason}}',
    ar: 'أخفق التطبيق "{{app}}": {{reason}}',
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    description: 'The request line and headers together are larger than the server accepts (16 KB). The connection is closed.',
    en: 'The request headers are too large.',
    ar: 'ترويسات الطلب كبيرة جدًا.',
  },
  SERVICE_UNAVAILABLE: {
    status: 503,
    description: 'The database could not take the request at that moment (another writer held it past the wait, two transactions locked each other, no connection was free); nothing was written. Retry after the `Retry-After` header; an `Idempotency-Key` makes the retry of a create safe.',
    en: 'The service is busy; retry in {{seconds}} seconds.',
    ar: 'الخدمة مشغولة؛ أعد المحاولة بعد {{seconds}} ثانية.',
  },
  INTERNAL: {
    status: 500,
    description: 'An unexpected fault; it is logged with the request id.',
    en: 'Something went wrong on our side.',
    ar: 'حدث خطأ من جهتنا.',
  },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof errorCodes;
