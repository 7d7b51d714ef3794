// Apps' sources (and the host's first-party apps) are TypeScript loaded at run time. Under tsx
// (or vitest) that works already; the compiled CLI (cli/compile.js) registers tsx's loader the
// first time a command needs it, so the commands that never do start without it.
declare const __DIWAN_COMPILED__: boolean | undefined;

let registered: Promise<void> | undefined;

export function loadsTypeScript(): Promise<void> {
  if (typeof __DIWAN_COMPILED__ === 'undefined') return Promise.resolve();
  registered ??= import('tsx/esm/api').then(({ register }) => void register());
  return registered;
}
