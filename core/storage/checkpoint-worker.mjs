// Worker thread of the Checkpointer (checkpointer.ts): its own connection to the SQLite file,
// which copies the write-ahead log into the database when asked. Plain JS so it loads the same
// under tsx, vitest and node.
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
  let result;
  try {
    // PASSIVE: never waits for the writer or for readers; what it cannot copy now, the next one does.
    const [row] = conn.pragma('wal_checkpoint(PASSIVE)');
    result = { ok: true, log: row.log, checkpointed: row.checkpointed };
  } catch (err) {
    result = { ok: false, error: String(err) };
  }
  parentPort.postMessage(result);
});
