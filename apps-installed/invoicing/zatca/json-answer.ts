/** A gateway's answer as a JSON object, or undefined when it is not one (an HTML error page, nothing). */
export function jsonAnswer(text: string): Record<string, any> | undefined {
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}
