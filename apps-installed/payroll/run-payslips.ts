// A payroll run's payslips. Its calculation makes a draft payslip for every employee in the
// period, from the salary assignment in force at its end (ERPNext's payroll entry "creates salary slips" from salary
// structure assignments; Odoo's batch "generates payslips" from contracts). Pay for part of the
// period is prorated by its calendar days (ERPNext's payment days over the days of the period,
// holidays included); what the payslip computes from its pay (GOSI, gross, net) its rules do.
// Once the run is paid, each of its payslips is confirmed and published to its employee (Odoo's
// batch marks its payslips paid; ERPNext's payroll entry submits its salary slips).
import { calendarDays, minorDigits, prorate, type AppContext, type Doc } from 'diwan/sdk';

const PAY = ['basicSalary', 'housingAllowance', 'transportAllowance', 'otherAllowances'] as const;

/** Each employee's assignment in force on `day` (the latest from on or before it). */
function inForce(assignments: Doc[], day: string): Map<string, Doc> {
  const out = new Map<string, Doc>();
  for (const a of assignments) {
    if ((a.fromDate as string) > day) continue;
    const had = out.get(a.employeeId as string);
    if (!had || (had.fromDate as string) < (a.fromDate as string)) out.set(a.employeeId as string, a);
  }
  return out;
}

/** Creates the run's missing payslips, in its unit of work; answers how many. */
export async function makePayslips(run: Doc, ctx: AppContext): Promise<number> {
  const start = run.periodStart as string;
  const end = run.periodEnd as string;
  const days = calendarDays(start, end);
  const digits = minorDigits(ctx.company.currency);
  const salaries = inForce(await ctx.docs('salaryAssignment').all(), end);
  const paid = new Set((await ctx.docs('payslip').all({ filters: { runId: run.id } })).filter((s) => s.state !== 'cancelled').map((s) => s.employeeId));
  const slips = ctx.docs('payslip');
  let made = 0;
  for (const employee of await ctx.docs('employees/employee').all({ sort: 'createdAt' })) {
    const salary = salaries.get(employee.id);
    if (!salary || paid.has(employee.id)) continue;
    const joined = typeof employee.joinDate === 'string' ? employee.joinDate : start;
    const left = typeof employee.exitDate === 'string' ? employee.exitDate : end;
    if (joined > end || left < start) continue;
    const worked = calendarDays(joined > start ? joined : start, left < end ? left : end);
    const body: Record<string, unknown> = { runId: run.id, employeeId: employee.id };
    for (const f of PAY) if (typeof salary[f] === 'number') body[f] = worked === days ? salary[f] : prorate(salary[f] as number, worked, days, digits);
    await slips.create(body);
    made++;
  }
  return made;
}

/** Confirms and publishes the run's payslips not cancelled (each publication is its employee's `payroll.payslip.published`). */
export async function publishPayslips(run: Doc, ctx: AppContext): Promise<void> {
  const slips = ctx.docs('payslip');
  for (const slip of await slips.all({ filters: { runId: run.id }, sort: 'createdAt' })) {
    if (slip.state === 'draft') await slips.transition(slip.id, 'confirm');
    if (slip.state === 'draft' || slip.state === 'confirmed') await slips.transition(slip.id, 'publish');
  }
}
