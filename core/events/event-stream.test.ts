// The stream's poll loop: one at a time, however readers come and go.
import { describe, expect, it } from 'vitest';
import type { EventLog } from './event-log.ts';
import type { Outbox } from './outbox.ts';
import { EventStreams } from './event-stream.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sink = { send: async () => {}, end: () => {} };

describe('EventStreams poll loop', () => {
  it('keeps one loop when the last reader leaves and a new one comes while a poll is reading', async () => {
    let polls = 0;
    let hold: (() => void) | undefined;
    const log = {
      // The readers' own reads answer at once; the loop's poll can be held mid-read.
      lastPosition: () => {
        polls++;
        return hold ? Promise.resolve(0) : new Promise<number>((r) => (hold = () => r(0)));
      },
      between: async () => [],
    } as unknown as EventLog;
    const outbox = { listen: () => () => {} } as unknown as Outbox;
    const streams = new EventStreams(outbox, log, { pollMs: 20 });
    hold = () => {};
    const first = streams.open('co_1', undefined, 0, sink);
    hold = undefined;
    await sleep(40); // the loop's poll is now held in its read
    expect(hold).toBeDefined();
    const release = hold!;
    first.close();
    const second = streams.open('co_1', undefined, 0, sink);
    release();
    await sleep(20);
    const before = polls;
    await sleep(300);
    second.close();
    // One loop polls at most every 20 ms (15 in 300 ms, fewer on a busy machine); two loops, as
    // before the fix, about twice that (measured: 19 in 200 ms). And it does poll.
    expect(polls - before).toBeLessThanOrEqual(18);
    expect(polls - before).toBeGreaterThanOrEqual(1);
  });
});
