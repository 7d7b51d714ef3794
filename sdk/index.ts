// The app author's and webhook consumer's import: `import { defineApp, route } from 'diwan/sdk'`.
export { defineApp, route } from './define-app.ts';
export type {
  AppDefinition, AppRoute, AppContext, Address, CompanyInfo, AppMigration, DocHooks, DocHandle, Doc, ListQuery, ListResult, RouteReply, RouteRequest, RouteSchemas, HttpMethod, Lang,
  JobsHandle, JobContext, JobHandler, EnqueueOptions,
} from './define-app.ts';
export type { Manifest, DocumentTypeDecl, FieldDecl, EventFamilyDecl, TopicDecl, PermissionDecl, MenuDecl, Role, SourceDecl, ScheduleDecl, AggregateDecl, WhenDecl } from '../manifests/manifest.schema.ts';
export { multiplyToMinor, toMinor, fromMinor, minorText, roundMoney, minorDigits, prorate } from './money.ts';
export { calendarDays } from './dates.ts';
export { AppError, fieldError, RetryLater } from './errors.ts';
export {
  verifySignature, verifyStandardSignature, verifyWebhook, standardSecret, SIGNATURE_HEADER, STANDARD_HEADERS,
  type VerifyResult, type VerifyFailure, type VerifyOptions, type StandardVerifyOptions,
} from './verify-signature.ts';
export type { ErrorCode } from './errors.ts';
