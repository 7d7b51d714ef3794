// Every word the document prints, in both languages: the English beside the Arabic, as a
// Saudi tax invoice carries them. Titles follow ZATCA's names for the document types.
import type { Bilingual, InvoiceKind, TaxCategory } from './invoice-view.ts';

export const TITLES: Record<InvoiceKind, Bilingual> = {
  standard: { en: 'Tax Invoice', ar: 'فاتورة ضريبية' },
  simplified: { en: 'Simplified Tax Invoice', ar: 'فاتورة ضريبية مبسطة' },
  credit: { en: 'Credit Note', ar: 'إشعار دائن' },
  debit: { en: 'Debit Note', ar: 'إشعار مدين' },
};

export const CATEGORIES: Record<TaxCategory, Bilingual> = {
  S: { en: 'Standard rate', ar: 'النسبة الأساسية' },
  Z: { en: 'Zero-rated', ar: 'خاضع للنسبة الصفرية' },
  E: { en: 'Exempt', ar: 'معفى من الضريبة' },
  O: { en: 'Out of scope', ar: 'خارج نطاق الضريبة' },
};

export const LABELS = {
  invoiceNumber: { en: 'Invoice number', ar: 'رقم الفاتورة' },
  noteNumber: { en: 'Note number', ar: 'رقم الإشعار' },
  issueDate: { en: 'Issue date', ar: 'تاريخ الإصدار' },
  hijriDate: { en: 'Hijri date', ar: 'التاريخ الهجري' },
  originalInvoice: { en: 'Original invoice', ar: 'الفاتورة الأصلية' },
  reason: { en: 'Reason', ar: 'سبب الإصدار' },
  seller: { en: 'Seller', ar: 'البائع' },
  buyer: { en: 'Buyer', ar: 'المشتري' },
  vatNumber: { en: 'VAT number', ar: 'الرقم الضريبي' },
  crNumber: { en: 'CR number', ar: 'السجل التجاري' },
  address: { en: 'Address', ar: 'العنوان' },
  lines: { en: 'Lines', ar: 'البنود' },
  lineNo: { en: '#', ar: 'م' },
  description: { en: 'Description', ar: 'الوصف' },
  quantity: { en: 'Qty', ar: 'الكمية' },
  unitPrice: { en: 'Unit price', ar: 'سعر الوحدة' },
  net: { en: 'Taxable', ar: 'الخاضع للضريبة' },
  rate: { en: 'VAT %', ar: 'النسبة' },
  tax: { en: 'VAT', ar: 'الضريبة' },
  lineTotal: { en: 'Total', ar: 'الإجمالي' },
  breakdown: { en: 'VAT breakdown', ar: 'تفاصيل ضريبة القيمة المضافة' },
  category: { en: 'Category', ar: 'الفئة' },
  taxable: { en: 'Taxable amount', ar: 'المبلغ الخاضع للضريبة' },
  taxAmount: { en: 'VAT amount', ar: 'مبلغ الضريبة' },
  subtotal: { en: 'Total excluding VAT', ar: 'الإجمالي غير شامل ضريبة القيمة المضافة' },
  taxTotal: { en: 'Total VAT', ar: 'مجموع ضريبة القيمة المضافة' },
  total: { en: 'Total including VAT', ar: 'الإجمالي شامل ضريبة القيمة المضافة' },
  currency: { en: 'Amounts in', ar: 'المبالغ بعملة' },
  page: { en: 'Page', ar: 'صفحة' },
  of: { en: 'of', ar: 'من' },
  continued: { en: 'continued', ar: 'تابع' },
} satisfies Record<string, Bilingual>;
