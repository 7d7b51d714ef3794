/**
 * What an e-invoice cannot be right without, checked before it is written: the formats ZATCA
 * requires and the arithmetic its validator applies (EN 16931's BR-CO rules, the per-category
 * BR-S/Z/E/O-08 and -09 rules, and KSA's exemption reasons). The caller computes; a mistake here
 * would be a rejection by ZATCA later, so it is refused now with every problem named.
 */
import type { TaxCategory, ZatcaDocument } from './types.ts';

export function checkDocument(doc: ZatcaDocument): void {
  const problems = [...formatProblems(doc), ...arithmeticProblems(doc)];
  if (problems.length) throw new TypeError(`ZATCA document ${doc.number}: ${problems.join('; ')}`);
}

function formatProblems(doc: ZatcaDocument): string[] {
  const problems: string[] = [];
  if (!/^\d{4}-\d{2}-\d{2}$/.test(doc.issueDate)) problems.push('issueDate must be YYYY-MM-DD');
  if (!/^\d{2}:\d{2}:\d{2}Z?$/.test(doc.issueTime)) problems.push('issueTime must be HH:MM:SS');
  if (!/^[A-Za-z0-9-]+$/.test(doc.uuid)) problems.push('uuid may hold only letters, digits and dashes');
  if (!Number.isSafeInteger(doc.counter) || doc.counter < 1) problems.push('counter must be a positive integer');
  if (doc.kind !== 'invoice' && (doc.billingReference === undefined || doc.reason === undefined))
    problems.push('a credit or debit note needs billingReference and reason');
  if (doc.lines.length === 0) problems.push('a document needs at least one line');
  if ((doc.currency ?? 'SAR') !== 'SAR' && doc.taxAmountInSar === undefined) problems.push('a document not in SAR needs taxAmountInSar (BR-KSA-97)');
  for (const l of doc.lines) {
    if (!/^\d+(\.\d+)?$/.test(l.quantity)) problems.push(`line ${l.id}: quantity must be a decimal string`);
    if (l.taxCategory !== 'S' && l.taxPercent !== 0) problems.push(`line ${l.id}: category ${l.taxCategory} has a 0 % rate`);
  }
  for (const s of doc.taxSubtotals)
    if (s.category !== 'S' && (s.exemptionReasonCode === undefined || s.exemptionReason === undefined))
      problems.push(`tax subtotal ${s.category}: needs an exemption reason code and text`);
  return problems;
}

function arithmeticProblems(doc: ZatcaDocument): string[] {
  const problems: string[] = [];
  const t = doc.totals;
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const lineNet = sum(doc.lines.map((l) => l.lineExtensionAmount));
  if (lineNet !== t.lineExtensionAmount) problems.push(`lineExtensionAmount ${t.lineExtensionAmount} is not the sum of the lines, ${lineNet} (BR-CO-10)`);
  if (t.taxExclusiveAmount !== t.lineExtensionAmount) problems.push('taxExclusiveAmount must equal lineExtensionAmount (BR-CO-13)');
  const subtotalTax = sum(doc.taxSubtotals.map((s) => s.taxAmount));
  if (subtotalTax !== t.taxAmount) problems.push(`taxAmount ${t.taxAmount} is not the sum of the tax subtotals, ${subtotalTax} (BR-CO-14)`);
  if (t.taxInclusiveAmount !== t.taxExclusiveAmount + t.taxAmount) problems.push('taxInclusiveAmount must be taxExclusiveAmount + taxAmount (BR-CO-15)');
  if (t.payableAmount !== t.taxInclusiveAmount) problems.push('payableAmount must equal taxInclusiveAmount (BR-CO-16)');

  const key = (c: TaxCategory, p: number) => `${c} ${p}%`;
  const lines = new Map<string, { net: number; count: number }>();
  for (const l of doc.lines) {
    const k = key(l.taxCategory, l.taxPercent);
    const g = lines.get(k) ?? { net: 0, count: 0 };
    lines.set(k, { net: g.net + l.lineExtensionAmount, count: g.count + 1 });
  }
  const seen = new Set<string>();
  for (const s of doc.taxSubtotals) {
    const k = key(s.category, s.percent);
    if (seen.has(k)) problems.push(`tax subtotal ${k} appears twice`);
    seen.add(k);
    const g = lines.get(k);
    if (!g) {
      problems.push(`tax subtotal ${k} has no line`);
      continue;
    }
    if (s.taxableAmount !== g.net) problems.push(`tax subtotal ${k}: taxable ${s.taxableAmount} is not the sum of its lines, ${g.net} (BR-${s.category}-08)`);
    // ZATCA's validator allows a halala per line around the category's own rounding (BR-S-09).
    const expected = percentOf(s.taxableAmount, s.percent);
    if (Math.abs(s.taxAmount - expected) > g.count) problems.push(`tax subtotal ${k}: tax ${s.taxAmount} is not ${s.percent} % of ${s.taxableAmount} (BR-${s.category}-09)`);
  }
  for (const k of lines.keys()) if (!seen.has(k)) problems.push(`lines of ${k} have no tax subtotal`);
  return problems;
}

/** percent % of an amount in minor units, rounded half away from zero, exactly (BigInt: no float, no overflow). */
export function percentOf(minor: number, percent: number): number {
  const n = BigInt(minor) * BigInt(Math.round(percent * 100));
  const abs = n < 0n ? -n : n;
  const q = abs / 10_000n + (2n * (abs % 10_000n) >= 10_000n ? 1n : 0n);
  return Number(n < 0n ? -q : q);
}
