// Worker thread of the Checkpointer (checkpointer.ts): its own connection to the SQLite file,
// which copies the write-ahead log into the database when asked and answers whether it could.
// Plain JS so it loads the same under tsx, vitest and node.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const conn = new Database(workerData.file);
conn.pragma('synchronous = NORMAL');
conn.pragma('busy_timeout = 5000');

parentPort.on('message', (m) => {
  if (m === 'close') {
    conn.close();
    parentPort.close();
    return;
  }
  let ok = true;
  try {
    // PASSIVE: never waits for the writer or for readers; what it cannot copy now, the next one does.
    conn.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    ok = false;
  }
  parentPort.postMessage(ok);
});
