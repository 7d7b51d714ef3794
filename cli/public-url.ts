// The base of the links the CLI prints (a one-time sign-in link): DIWAN_PUBLIC_URL when set
// (the host's config reads it), else what the server running on this data folder recorded when
// it started listening (core/kernel/server-record.ts), else the host's default. Without the
// record, a server started on another port got links pointing at port 3000.
import { readServerRecord } from '../core/kernel/server-record.ts';

/** The running server's public URL without a trailing slash; undefined when no server is recorded. */
export function recordedPublicUrl(dataDir: string): string | undefined {
  return readServerRecord(dataDir)?.publicUrl.replace(/\/$/, '');
}
