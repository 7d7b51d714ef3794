// The host's own strings (namespace `core`). Error messages come from the error table so
// they live in one place; validation rules are phrased here, with Arabic plural forms
// (zero, one, two, few, many, other) where a count is involved.
import { errorCodes } from '../errors/codes.ts';

type Table = Record<string, string>;

const en: Table = {
  'rule.required': '{{field}} is required',
  'rule.type': '{{field}} must be of type {{type}}',
  'rule.minimum': '{{field}} must be at least {{limit}}',
  'rule.maximum': '{{field}} must be at most {{limit}}',
  'rule.exclusiveMinimum': '{{field}} must be greater than {{limit}}',
  'rule.exclusiveMaximum': '{{field}} must be less than {{limit}}',
  'rule.additionalProperties': '{{field}} is not a known field',
  'rule.format': '{{field}} must be a valid {{format}}',
  'rule.pattern': '{{field}} does not have the expected form',
  'rule.enum': '{{field}} must be one of: {{values}}',
  'rule.const': '{{field}} must be {{values}}',
  'rule.minItems_one': '{{field}} must have at least {{count}} item',
  'rule.minItems_other': '{{field}} must have at least {{count}} items',
  'rule.maxItems_one': '{{field}} must have at most {{count}} item',
  'rule.maxItems_other': '{{field}} must have at most {{count}} items',
  'rule.minLength_one': '{{field}} must have at least {{count}} character',
  'rule.minLength_other': '{{field}} must have at least {{count}} characters',
  'rule.maxLength_one': '{{field}} must have at most {{count}} character',
  'rule.maxLength_other': '{{field}} must have at most {{count}} characters',
  'rule.uniqueItems': '{{field}} must not repeat items',
  'rule.exists': '{{field}} does not name an existing {{target}} of this company',
  'rule.dateOrder': '{{field}} must not be before {{other}}',
  'rule.finite': '{{field}} must be a finite number',
  'rule.other': '{{field}} is not valid',
  'body': 'the body',
  'reason.malformedJson': 'malformed JSON',
  'reason.emptyJson': 'the JSON body is empty',
  'reason.contentLength': 'the Content-Length header is wrong',
  'reason.idempotencyReused': 'the Idempotency-Key was used with a different request',
  'reason.transition': 'the transition "{{transition}}" is not allowed from the state "{{state}}"',
  'reason.duplicate': '{{what}} already exists',
  'reason.inUse': '{{what}} is still in use',
};

const ar: Table = {
  'rule.required': 'الحقل {{field}} مطلوب',
  'rule.type': 'يجب أن يكون {{field}} من النوع {{type}}',
  'rule.minimum': 'يجب أن تكون قيمة {{field}} على الأقل {{limit}}',
  'rule.maximum': 'يجب ألا تزيد قيمة {{field}} على {{limit}}',
  'rule.exclusiveMinimum': 'يجب أن تكون قيمة {{field}} أكبر من {{limit}}',
  'rule.exclusiveMaximum': 'يجب أن تكون قيمة {{field}} أصغر من {{limit}}',
  'rule.additionalProperties': '{{field}} ليس حقلًا معروفًا',
  'rule.format': 'يجب أن يكون {{field}} بصيغة {{format}} صحيحة',
  'rule.pattern': '{{field}} ليس بالشكل المتوقع',
  'rule.enum': 'يجب أن يكون {{field}} إحدى القيم: {{values}}',
  'rule.const': 'يجب أن يكون {{field}} مساويًا لـ {{values}}',
  'rule.minItems_zero': 'يجب ألا يقل عدد عناصر {{field}} عن صفر',
  'rule.minItems_one': 'يجب أن يحتوي {{field}} على عنصر واحد على الأقل',
  'rule.minItems_two': 'يجب أن يحتوي {{field}} على عنصرين على الأقل',
  'rule.minItems_few': 'يجب أن يحتوي {{field}} على {{count}} عناصر على الأقل',
  'rule.minItems_many': 'يجب أن يحتوي {{field}} على {{count}} عنصرًا على الأقل',
  'rule.minItems_other': 'يجب أن يحتوي {{field}} على {{count}} عنصر على الأقل',
  'rule.maxItems_zero': 'يجب ألا يحتوي {{field}} على أي عنصر',
  'rule.maxItems_one': 'يجب ألا يحتوي {{field}} على أكثر من عنصر واحد',
  'rule.maxItems_two': 'يجب ألا يحتوي {{field}} على أكثر من عنصرين',
  'rule.maxItems_few': 'يجب ألا يحتوي {{field}} على أكثر من {{count}} عناصر',
  'rule.maxItems_many': 'يجب ألا يحتوي {{field}} على أكثر من {{count}} عنصرًا',
  'rule.maxItems_other': 'يجب ألا يحتوي {{field}} على أكثر من {{count}} عنصر',
  'rule.minLength_zero': 'يمكن أن يكون {{field}} فارغًا',
  'rule.minLength_one': 'يجب أن يتكون {{field}} من حرف واحد على الأقل',
  'rule.minLength_two': 'يجب أن يتكون {{field}} من حرفين على الأقل',
  'rule.minLength_few': 'يجب أن يتكون {{field}} من {{count}} أحرف على الأقل',
  'rule.minLength_many': 'يجب أن يتكون {{field}} من {{count}} حرفًا على الأقل',
  'rule.minLength_other': 'يجب أن يتكون {{field}} من {{count}} حرف على الأقل',
  'rule.maxLength_zero': 'يجب أن يكون {{field}} فارغًا',
  'rule.maxLength_one': 'يجب ألا يزيد {{field}} على حرف واحد',
  'rule.maxLength_two': 'يجب ألا يزيد {{field}} على حرفين',
  'rule.maxLength_few': 'يجب ألا يزيد {{field}} على {{count}} أحرف',
  'rule.maxLength_many': 'يجب ألا يزيد {{field}} على {{count}} حرفًا',
  'rule.maxLength_other': 'يجب ألا يزيد {{field}} على {{count}} حرف',
  'rule.uniqueItems': 'يجب ألا تتكرر عناصر {{field}}',
  'rule.exists': '{{field}} لا يشير إلى {{target}} موجود في هذه الشركة',
  'rule.dateOrder': 'يجب ألا يكون {{field}} قبل {{other}}',
  'rule.finite': 'يجب أن يكون {{field}} رقمًا محدودًا',
  'rule.other': '{{field}} غير صالح',
  'body': 'محتوى الطلب',
  'reason.malformedJson': 'صيغة JSON غير سليمة',
  'reason.emptyJson': 'محتوى JSON فارغ',
  'reason.contentLength': 'قيمة الترويسة Content-Length غير صحيحة',
  'reason.idempotencyReused': 'استُخدم مفتاح Idempotency-Key مع طلب مختلف',
  'reason.transition': 'الانتقال "{{transition}}" غير مسموح به من الحالة "{{state}}"',
  'reason.duplicate': '{{what}} موجود مسبقًا',
  'reason.inUse': '{{what}} ما زال قيد الاستخدام',
};

for (const [code, entry] of Object.entries(errorCodes)) {
  en[`error.${code}`] = entry.en;
  ar[`error.${code}`] = entry.ar;
}

export const coreStrings = { en, ar };
