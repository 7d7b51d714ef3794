// Time off: leave requests and allocations are document types declared in the manifest. This
// bundle adds the one event a document source cannot say: `time-off.request.pending` fires each
// time a request reaches an approver's queue — the employee's line manager when it is submitted
// (created), HR when the manager approves it and refers it on (`managerApprove`).
import { defineApp, type AppContext, type Doc } from 'diwan/sdk';

async function pending(doc: Doc, step: 'manager' | 'hr', ctx: AppContext): Promise<void> {
  const data: Record<string, unknown> = {
    requestId: doc.id,
    employeeId: doc.employeeId,
    leaveType: doc.leaveType,
    startDate: doc.startDate,
    endDate: doc.endDate,
    days: doc.days,
    step,
  };
  if (step === 'manager') {
    const employee = await ctx.docs('employees/employee').get(doc.employeeId as string);
    if (typeof employee?.managerId === 'string') data.approverId = employee.managerId;
  }
  await ctx.events.emit('time-off.request.pending', data);
}

export default defineApp({
  id: 'time-off',
  hooks: {
    leaveRequest: {
      async afterCreate(doc, ctx) {
        await pending(doc, 'manager', ctx);
      },
      async afterTransition(doc, transition, ctx) {
        if (transition === 'managerApprove') await pending(doc, 'hr', ctx);
      },
    },
  },
});
