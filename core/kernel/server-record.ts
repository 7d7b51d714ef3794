// Where a running server can be reached, recorded in its data folder (`server.json`) once it
// listens and removed when it closes cleanly, so that the CLI, run on the same data folder,
// prints links to that server (`diwan users create`) rather than to the default port. A server
// that died leaves the file behind: a reader ignores a record whose process is gone.
import fs from 'node:fs';
import path from 'node:path';

export const SERVER_RECORD = 'server.json';

export interface ServerRecord {
  /** Where people reach it: DIWAN_PUBLIC_URL when set, else the address it listens on. */
  publicUrl: string;
  pid: number;
  startedAt: string;
}

/** The URL of a server listening on `host`:`port`; a wildcard address (every interface) reads as localhost. */
export function listenUrl(host: string, port: number): string {
  const name = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

/**
 * Where a person on this machine opens it: loopback reads as localhost too, as the default
 * DIWAN_PUBLIC_URL does (one origin for the session cookie, whichever link was followed).
 */
export function localUrl(host: string, port: number): string {
  return ['127.0.0.1', '::1', 'localhost'].includes(host) ? `http://localhost:${port}` : listenUrl(host, port);
}

/** Writes the record whole (a reader never sees half of it); a failure to write is not the server's to die of. */
export function writeServerRecord(dataDir: string, publicUrl: string, pid = process.pid): boolean {
  const file = path.join(dataDir, SERVER_RECORD);
  const tmp = `${file}.${pid}.tmp`;
  try {
    const record: ServerRecord = { publicUrl, pid, startedAt: new Date().toISOString() };
    fs.writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`);
    fs.renameSync(tmp, file);
    return true;
  } catch {
    fs.rmSync(tmp, { force: true });
    return false;
  }
}

/** Removes the record if it is this process's (another server may have written its own since). */
export function removeServerRecord(dataDir: string, pid = process.pid): void {
  const r = readRecord(dataDir);
  if (r?.pid === pid) fs.rmSync(path.join(dataDir, SERVER_RECORD), { force: true });
}

function readRecord(dataDir: string): ServerRecord | undefined {
  try {
    const r = JSON.parse(fs.readFileSync(path.join(dataDir, SERVER_RECORD), 'utf8')) as Partial<ServerRecord>;
    if (typeof r.publicUrl !== 'string' || !/^https?:\/\/\S+$/.test(r.publicUrl) || !Number.isInteger(r.pid)) return undefined;
    return r as ServerRecord;
  } catch {
    return undefined;
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but is another user's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The record of the server running on this data folder; undefined when none is (or it died). */
export function readServerRecord(dataDir: string): ServerRecord | undefined {
  const r = readRecord(dataDir);
  return r && alive(r.pid) ? r : undefined;
}
