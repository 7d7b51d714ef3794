// The loopback webhook receiver of bench/scaling.ts, in its own process (so it costs every case
// alike). It answers 200 at once and notes, per delivery, the event id, the delivery id and when
// the request ended (wall clock in ms with sub-ms precision, comparable with the bench's commit
// times on the same machine). Over IPC: it reports `{ port }` once listening; `{ expect: n }`
// starts a run, answered with every receipt once n distinct deliveries arrived.
import http from 'node:http';

interface Receipt {
  eventId: string;
  deliveryId: string;
  at: number;
}

const now = () => performance.timeOrigin + performance.now();
let receipts: Receipt[] = [];
let seen = new Set<string>();
let expected = Infinity;

function check(): void {
  if (seen.size < expected) return;
  process.send!({ receipts });
  receipts = [];
  seen = new Set();
  expected = Infinity;
}

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const at = now();
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('ok');
    const deliveryId = String(req.headers['x-diwan-delivery-id'] ?? '');
    // A delivery sent twice (a lost lease) is counted once: its first receipt.
    if (seen.has(deliveryId)) return;
    seen.add(deliveryId);
    receipts.push({ eventId: String(req.headers['x-diwan-event-id'] ?? ''), deliveryId, at });
    check();
  });
});
server.keepAliveTimeout = 5000;
process.on('message', (m: { expect: number }) => {
  expected = m.expect;
  check();
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send!({ port: typeof address === 'object' && address ? address.port : 0 });
});
process.once('SIGTERM', () => process.exit(0));
