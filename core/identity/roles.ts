// Roles, lowest to highest. A permission names the lowest role that holds it; every higher
// role holds it too.
export const ROLES = ['Viewer', 'Member', 'Manager', 'Admin', 'Owner'] as const;
export type Role = (typeof ROLES)[number];

export const roleRank = (role: Role): number => ROLES.indexOf(role);
export const isRole = (value: unknown): value is Role => ROLES.includes(value as Role);
export const roleAtLeast = (role: Role, lowest: Role): boolean => roleRank(role) >= roleRank(lowest);
