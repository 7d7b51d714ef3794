// Whether a field of a CEL object is set. A number the document does not have reads as 0 in a
// rule (a paper form's blank), so CEL's own has() would call it set; the objects remember the
// numbers they were built without, and has(x.f) runs as isSet(x, "f") (document-rules.ts).
/** The numeric fields a CEL object was built without (they read as 0): `has()` tells them from a 0 that was given. */
export const UNSET = Symbol('unset');

/** `has(obj.name)` as rules mean it: the field is there, and is not a number left out. */
export function isSet(obj: Record<string | symbol, unknown> | undefined, name: string): boolean {
  const v = obj?.[name];
  return v !== undefined && v !== null && !(obj![UNSET] as string[] | undefined)?.includes(name);
}

/** Sets a field of a CEL object (a computed value, a default): it is set from then on. */
export function setCel(obj: Record<string | symbol, unknown>, name: string, value: unknown): void {
  obj[name] = value;
  const unset = obj[UNSET] as string[] | undefined;
  if (unset?.includes(name)) obj[UNSET] = unset.filter((n) => n !== name);
}
