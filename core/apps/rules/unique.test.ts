// What a manifest gets wrong about unique fields, `uniqueValues` above all: each problem at its
// JSON pointer, so an author sees which value of which field is wrong.
import { describe, expect, it } from 'vitest';
import type { DocumentTypeDecl } from '../../../manifests/manifest.schema.ts';
import { uniqueProblems } from './unique.ts';

const leave = (leaveType: Record<string, unknown>, more: Record<string, unknown>[] = []): DocumentTypeDecl =>
  ({
    name: 'leaveRequest',
    resource: 'leave-requests',
    states: ['to_approve', 'approved', 'rejected'],
    fields: [
      { name: 'employeeId', type: 'reference', to: 'employees/employee' },
      { name: 'leaveType', type: 'enum', values: ['annual', 'hajj'], ...leaveType },
      ...more,
    ],
  }) as DocumentTypeDecl;
const problems = (dt: DocumentTypeDecl) => uniqueProblems(dt, '/documentTypes/0').map((p) => [p.pointer, p.rule]);

describe('unique fields in a manifest', () => {
  it('takes values unique within a parent, among the enum values, with the states that free them', () => {
    expect(problems(leave({ uniqueWithin: 'employeeId', uniqueValues: ['hajj'], uniqueExceptIn: ['rejected'] }))).toEqual([]);
    expect(problems(leave({ unique: true, uniqueValues: ['hajj', 'annual'] }))).toEqual([]);
    expect(problems(leave({}, [{ name: 'code', type: 'string', unique: true, uniqueValues: ['HQ'] }]))).toEqual([]);
  });

  it('refuses a value the enum does not have, each at its pointer', () => {
    expect(problems(leave({ uniqueWithin: 'employeeId', uniqueValues: ['hajj', 'umrah', 'Hajj'] }))).toEqual([
      ['/documentTypes/0/fields/1/uniqueValues/1', 'enum'],
      ['/documentTypes/0/fields/1/uniqueValues/2', 'enum'],
    ]);
  });

  it('refuses uniqueValues on a field that is not unique, or whose values are not strings', () => {
    expect(problems(leave({ uniqueValues: ['hajj'] }))).toEqual([['/documentTypes/0/fields/1/uniqueValues', 'unique']]);
    expect(problems(leave({}, [{ name: 'year', type: 'integer', unique: true, uniqueValues: ['2026'] }]))).toEqual([['/documentTypes/0/fields/2/uniqueValues', 'unique']]);
    expect(problems(leave({}, [{ name: 'coverId', type: 'reference', to: 'employees/employee', unique: true, uniqueValues: ['emp_1'] }]))).toEqual([
      ['/documentTypes/0/fields/2/uniqueValues', 'unique'],
    ]);
  });
});
