// The payroll app: runs, payslips, salary assignments and end-of-service settlements are document
// types declared in its manifest. This bundle gives a run's calculation its payslips and
// publishes them once it is paid (run-payslips.ts), and adds the run's WPS salary file, the one a
// payroll officer uploads to the bank for the Wage Protection System (Mudad). Its layout is Odoo's Saudi payroll's
// (l10n_sa_hr_payroll, "structured in accordance with the technical guidelines issued by the
// MHRSD": https://www.odoo.com/documentation/19.0/applications/hr/payroll/payroll_localizations/saudi_arabia.html#wps-reports;
// fields from its 19.0 wizard/hr_payroll_payment_report_wizard.py and models/hr_payslip.py):
// tab-separated, CRLF-ended rows; the establishment's header row under its tags, the tag row of
// the employees and one row per payslip, then a row of `-` marking the end of the file.
import { defineApp, route, AppError, toMinor, minorText, type AppContext, type Doc } from 'diwan/sdk';
import { makePayslips, publishPayslips } from './run-payslips.ts';

/** Run states in which pay is final: the file pays what the run approved. */
const FINAL = ['approved', 'paid'];
/** The file's amounts are riyals with two decimals. */
const SAR_DIGITS = 2;

const HEADER_TAGS = ['[DEST-ID]', '[ESTB-ID]', '[BANK-ACC]', '[32A-CCY]', '[32A-VAL]', '[32A-AMT]', '[D-DATE]', '[FILE-REF]', '[FILE-REJCDE]', '[MOL-ESTBID]'];
const EMPLOYEE_TAGS = ['[32B-AMT]', '[59-ACC]', '[59-NAME]', '[57-BANK]', '[70-DET]', '[RET-CODE]', '[MOL-BAS]', '[MOL-HAL]', '[MOL-OEA]', '[MOL-DED]', '[MOL-ID]', '[TRN-REF]', '[TRN-STATUS]', '[TRN-DATE]'];

type WpsSettings = {
  molEstablishmentId: string;
  establishmentIban: string;
  establishmentBankSarieId: string;
  bankEstablishmentId: string;
};

const minor = (amount: unknown) => toMinor(typeof amount === 'number' ? amount : 0, SAR_DIGITS);

/** Minor units as the file writes them: `1128125n` → `11281.25`. */
const amount = (m: bigint) => minorText(m, SAR_DIGITS);

/** A cell quoted only when it holds the delimiter, a quote or a line break (Python's csv, as Odoo writes it). */
const cell = (v: string) => (/[\t"\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
const tsv = (rows: string[][]) => rows.map((r) => r.map(cell).join('\t') + '\r\n').join('');

/** Every missing value the file needs, each named, refused together. */
function refuseMissing(ctx: AppContext, settings: WpsSettings, slips: { slip: Doc; employee: Doc | undefined }[]): void {
  const details: Record<string, unknown>[] = [];
  for (const name of ['establishmentBankSarieId', 'bankEstablishmentId', 'establishmentIban', 'molEstablishmentId'] as const) {
    if (!settings[name]) details.push({ in: 'settings', pointer: `/${name}`, rule: 'required', message: ctx.t('wpsMissingSetting', { setting: name }) });
  }
  for (const { slip, employee } of slips) {
    for (const field of ['identityNumber', 'iban', 'bankSarieId'] as const) {
      const value = field === 'iban' ? (slip.iban ?? employee?.iban) : employee?.[field];
      if (value) continue;
      const id = slip.employeeId as string;
      details.push({
        in: 'employees', resource: 'employees', id, payslipId: slip.id, pointer: `/${field}`, rule: 'required',
        message: ctx.t('wpsMissingEmployee', { name: employee?.fullName ?? id, id, field: ctx.t(`field.${field}`) }),
      });
    }
  }
  if (details.length) throw new AppError('VALIDATION_ERROR', details, { summary: details.map((d) => d.message).join('; ') });
}

async function wpsFile(ctx: AppContext, id: string): Promise<{ file: string; run: Doc }> {
  const run = await ctx.docs('payrollRun').get(id);
  if (!run) throw new AppError('NOT_FOUND', [{ resource: 'payroll-runs', id }]);
  if (!FINAL.includes(run.state!)) throw new AppError('CONFLICT', [{ reason: 'not_final', id, state: run.state }], { reason: ctx.t('wpsNotFinal', { id, state: run.state }) });
  if (ctx.company.currency !== 'SAR') throw new AppError('CONFLICT', [{ reason: 'not_sar', currency: ctx.company.currency }], { reason: ctx.t('wpsNotSar', { currency: ctx.company.currency }) });
  // The manifest's series gives the reference at approval; a run approved before it has none.
  if (typeof run.wpsFileRef !== 'string') throw new AppError('CONFLICT', [{ reason: 'no_file_reference', id }], { reason: ctx.t('wpsNoReference', { id }) });

  const settings = await ctx.settings.get<WpsSettings>();
  // The payslips the run's totals count: every one but the cancelled.
  const slips = (await ctx.docs('payslip').all({ filters: { runId: run.id } })).filter((s) => s.state !== 'cancelled');
  const people = ctx.docs('employees/employee');
  const rows = await Promise.all(slips.map(async (slip) => ({ slip, employee: await people.get(slip.employeeId as string) })));
  refuseMissing(ctx, settings, rows);

  let total = 0n;
  const employeeRows = rows.map(({ slip, employee }) => {
    const [net, basic, housing, gross] = [slip.netPay, slip.basicSalary, slip.housingAllowance, slip.grossPay].map(minor);
    total += net;
    const bank = employee!.bankSarieId as string;
    return [
      amount(net),
      // The payslip's IBAN, when it has one, is the account this pay went to.
      (slip.iban ?? employee!.iban) as string,
      employee!.fullName as string,
      // Named only when the employee banks elsewhere than the establishment.
      bank === settings.establishmentBankSarieId ? '' : bank,
      '', // [70-DET] payment details: optional, and Diwan keeps none
      '', // [RET-CODE] is the bank's to fill
      amount(basic),
      amount(housing),
      amount(gross - basic - housing), // other earnings: transport, other allowances, overtime
      amount(gross - net), // deductions: social insurance and the others
      employee!.identityNumber as string,
      '', '', '', // [TRN-REF], [TRN-STATUS], [TRN-DATE] are the bank's to fill
    ];
  });
  const header = [
    settings.establishmentBankSarieId,
    settings.bankEstablishmentId,
    settings.establishmentIban,
    'SAR',
    (run.payDate as string).replaceAll('-', ''), // the value date: the run's pay date
    amount(total),
    '', // [D-DATE] the debit date is optional: the bank debits on the value date
    run.wpsFileRef,
    '', // [FILE-REJCDE] is the bank's to fill
    settings.molEstablishmentId,
  ];
  return { run, file: tsv([HEADER_TAGS, header, EMPLOYEE_TAGS, ...employeeRows, ['-']]) };
}

export default defineApp({
  id: 'payroll',
  hooks: {
    payrollRun: {
      async afterTransition(run, transition, ctx) {
        if (transition === 'calculate') await makePayslips(run, ctx);
        if (transition === 'markPaid') await publishPayslips(run, ctx);
      },
    },
  },
  routes: [
    route({
      method: 'GET',
      url: '/payroll-runs/:id/wps-file',
      permission: 'payroll-runs:read',
      produces: 'text/csv',
      offeredWhen: 'wpsFileRef',
      errors: ['NOT_FOUND', 'CONFLICT', 'VALIDATION_ERROR'],
      summary: "The run's WPS salary file, to upload to the bank for the Wage Protection System",
      description:
        "Odoo's Saudi WPS layout (l10n_sa_hr_payroll: https://www.odoo.com/documentation/19.0/applications/hr/payroll/payroll_localizations/saudi_arabia.html#wps-reports): " +
        'tab-separated rows, the establishment (its bank SARIE ID, bank establishment ID, IBAN, SAR, the pay date, the net total, the file reference, the MoL establishment ID), ' +
        'then one row per payslip not cancelled (net pay, IBAN, name, the bank SARIE ID when not the establishment\'s, basic, housing, other earnings, deductions, national ID or iqama), then `-`. ' +
        'Only for an approved or paid run (CONFLICT otherwise); every missing payroll setting and every employee without an IBAN, a national ID or iqama, or a bank SARIE ID is listed as one VALIDATION_ERROR.',
      schema: {
        params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 64 } } },
        response: { 200: { type: 'string', description: 'The WPS salary file, tab-separated' } },
      },
      async handler(req, ctx) {
        const { run, file } = await wpsFile(ctx, req.params.id);
        return { body: file, headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="WPS-${run.period as string}.csv"` } };
      },
    }),
  ],
});
