// Why `npm start` could not start, in one line an operator can act on, instead of a stack
// trace. Unknown faults return undefined and are shown in full by core/main.ts.
import { SettingError } from './kernel/setting-readers.ts';
import { DatabaseUnavailable } from './storage/open.ts';

export interface ListenTarget {
  port: number;
  host: string;
  dataDir?: string;
}

export function startFailureLine(err: unknown, target?: ListenTarget): string | undefined {
  if (err instanceof SettingError) return `invalid setting: ${err.message}`;
  if (err instanceof DatabaseUnavailable) return `${err.message}; check DIWAN_DATABASE_URL and that the server runs`;
  const e = err as NodeJS.ErrnoException & { syscall?: string; address?: string; port?: number };
  if (!e || typeof e !== 'object') return undefined;
  const port = e.port ?? target?.port;
  if (e.syscall === 'listen' || e.code === 'EADDRINUSE') {
    switch (e.code) {
      case 'EADDRINUSE':
        return `port ${port} is already in use; set PORT to another`;
      case 'EACCES':
        return `port ${port} needs privileges this process does not have; set PORT to 1024 or above`;
    }
  }
  if (e.code === 'EADDRNOTAVAIL' || (e.code === 'ENOTFOUND' && target)) {
    return `HOST ${JSON.stringify(target?.host ?? e.address)} is not an address of this machine; set HOST to one (0.0.0.0 for all)`;
  }
  if (target?.dataDir && e.code === 'SQLITE_CANTOPEN') {
    return `DATA_DIR ${JSON.stringify(target.dataDir)} cannot be used (the database cannot be opened there); set DATA_DIR to a writable folder`;
  }
  if (target?.dataDir && e.path?.startsWith(target.dataDir) && ['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST'].includes(e.code ?? '')) {
    return `DATA_DIR ${JSON.stringify(target.dataDir)} cannot be used (${e.code} on ${e.path}); set DATA_DIR to a writable folder`;
  }
  return undefined;
}
