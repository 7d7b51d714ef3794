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
    description: 'The request cannot be read: malformed JSON, an empty JSON body, a bad Content-Length.',
    en: 'The request body cannot be read: {{reason}}',
    ar: 'تعذّرت قراءة محتوى الطلب: {{reason}}',
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
    description: "The key's company, role or scopes do not reach what the route needs; `details` names the permission.",
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
  CONFLICT: {
    status: 409,
    description: 'The request conflicts with the current state: a duplicate, a transition not allowed from this state, an idempotency key reused with another body.',
    en: 'The request conflicts with the current state: {{reason}}',
    ar: 'يتعارض الطلب مع الحالة الحالية: {{reason}}',
  },
  APP_REFUSED: {
    status: 409,
    description: 'An app lifecycle step is refused: version outside the host range, missing dependency, dependency cycle, duplicate id, a claimed event prefix, a dependent app still installed; `details` lists every reason.',
    en: 'The app step was refused: {{reason}}',
    ar: 'رُفضت خطوة التطبيق: {{reason}}',
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
    description: 'Too many requests for this key; retry after the `Retry-After` header.',
    en: 'Too many requests; retry in {{seconds}} seconds.',
    ar: 'طلبات كثيرة جدًا؛ أعد المحاولة بعد {{seconds}} ثانية.',
  },
  INTERNAL: {
    status: 500,
    description: 'An unexpected fault; it is logged with the request id.',
    en: 'Something went wrong on our side.',
    ar: 'حدث خطأ من جهتنا.',
  },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof errorCodes;
