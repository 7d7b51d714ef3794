// The shell commands of README.md and docs/*.md, run in order as a reader runs them, against a
// real server this test starts on loopback with a fresh DATA_DIR. A command that fails (or whose
// `# → …` line shows what it does not print) fails the test with its document, line, block, the
// command and its output.
//
// How a reader's copy-paste is reproduced:
// - Each document is one reader at one terminal: one bash (`set -euo pipefail`) per document, in
//   a temporary folder of its own, so `cd` and variables carry from command to command and from
//   block to block. `diwan` resolves to this repository's CLI (package.json `bin`) through the
//   folder's node_modules/.bin, put first on the shell's PATH as `npm link` puts it there, and
//   `npx diwan` finds it in that folder as it does in a checkout; npm is kept offline.
// - Each document gets its own host (server + DATA_DIR). README.md starts from nothing; a
//   document under docs/ is read by someone who already followed the README, so the test first
//   runs the README's own `companies create` and `keys create` for it (the PRELUDE below).
// - Placeholders are filled from what earlier commands printed (the latest `co_…`, the full
//   `dwk_…` key and its id for `<keyId>`, `whe_…` for `<endpointId>`, `dlv_…` for `<dlv_…>` and
//   `<deliveryId>`, `cus_…`), and the example addresses point at this test: the server
//   (`localhost:3000`, `https://diwan.example.com`) and a loopback receiver that answers 500
//   (`https://example.com/hooks`, `http://localhost:4000`), so deliveries fail and the log, retry
//   and enable commands have something to show. `~/diwan` is this checkout. A placeholder used
//   before any command printed its value fails the test: the document is out of order.
// - Long-running commands are not skipped: the server is the test's own, so a `diwan start` or
//   `npm start` inside a block checks that server's /healthz instead; `diwan listen` runs in the
//   background until it prints "Ready", and is stopped when its block ends. After
//   `diwan events trigger` the test waits (≤ 20 s) for the delivery to reach the receiver, as a
//   reader would see it arrive before reading the log.
// Not run: ```sh norun blocks (each says why next to it), the set-up block (`npm install && npm
// start` / `npm test`: the server of each document is that `npm start`, on a free port; the
// install and the whole suite are the checkout's own), and every section whose heading mentions
// PostgreSQL (it needs a PostgreSQL server).
// Bounds: each command 60 s, the whole file 5 minutes (documents run side by side); the shells,
// their background jobs, the servers and the temporary folders are removed at the end.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = path.resolve(import.meta.dirname, '..');
const DOCUMENTS = ['README.md', ...fs.readdirSync(path.join(REPO, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const COMMAND_MS = 60_000;
const FILE_MS = 5 * 60_000;
const startedAt = Date.now();
const SETUP_LINES = new Set(['npm install && npm start', 'npm install && npm test']);
const PRELUDE = [
  `diwan companies create --name "Acme" --currency SAR --json`,
  `diwan keys create --company co_… --role Admin --scopes '*' --name ci --json`,
];

interface Command {
  line: number; // 1-based line in the document
  text: string; // as written, continuation lines included
  code: string; // without comments
  expect?: string; // a `# → …` line right after it: what it prints
}
interface Block {
  doc: string;
  line: number; // of the opening fence
  commands: Command[];
  skip?: string;
}

/** The ```sh and ```bash blocks of a document, with their line numbers and why one is not run. */
function blocks(doc: string): Block[] {
  const lines = fs.readFileSync(path.join(REPO, doc), 'utf8').split('\n');
  const headings: string[] = [];
  const found: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const heading = /^(#{1,6})\s+(.*)$/.exec(lines[i]);
    if (heading) {
      headings.length = heading[1].length - 1;
      headings[heading[1].length - 1] = heading[2];
      continue;
    }
    const fence = /^(\s*)```(\S*)\s*(.*)$/.exec(lines[i]);
    if (!fence) continue;
    const end = lines.findIndex((l, j) => j > i && /^\s*```\s*$/.test(l));
    const body = lines.slice(i + 1, end);
    if (fence[2] === 'sh' || fence[2] === 'bash') {
      const block: Block = { doc, line: i + 1, commands: commands(body, i + 2) };
      if (/\bnorun\b/.test(fence[3])) block.skip = 'marked norun';
      else if (headings.some((h) => h && /postgres/i.test(h))) block.skip = 'a PostgreSQL section: it needs a PostgreSQL server';
      else if (block.commands.every((c) => SETUP_LINES.has(c.code))) block.skip = 'the set-up block: this test runs its own server';
      found.push(block);
    }
    i = end;
  }
  return found;
}

/** A block's commands: continuation lines joined, comments dropped, `# →` lines kept as what to expect. */
function commands(body: string[], firstLine: number): Command[] {
  const out: Command[] = [];
  for (let i = 0; i < body.length; i++) {
    const start = i;
    let text = body[i];
    while (text.endsWith('\\') && i + 1 < body.length) text += '\n' + body[++i];
    const expectation = /^\s*#\s*→\s*(.*)$/.exec(text);
    if (expectation && out.length) {
      out[out.length - 1].expect = expectation[1];
      continue;
    }
    const code = stripComments(text).trim();
    if (code) out.push({ line: firstLine + start, text, code });
  }
  return out;
}

/** Drops `# …` comments (a `#` that starts a word outside quotes), keeping line continuations. */
function stripComments(text: string): string {
  let out = '';
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === "'" || ch === '"') {
      quote = ch;
    } else if (ch === '#' && (i === 0 || /\s/.test(text[i - 1]))) {
      while (i < text.length && text[i] !== '\n') i++;
      out = out.replace(/[ \t]+$/, '');
      if (i < text.length) out += '\n';
      continue;
    }
    out += ch;
  }
  return out;
}

interface Values {
  [placeholder: string]: string | undefined;
}

/** Remembers the ids a command printed: the first of each kind in its output. */
function capture(output: string, values: Values): void {
  const first = (re: RegExp) => re.exec(output);
  const key = first(/\bdwk_([a-z0-9]+)_[a-z0-9]+\b/);
  if (key) Object.assign(values, { 'dwk_…': key[0], '<keyId>': key[1] });
  const ids: [string, string[]][] = [
    ['co', ['co_…']],
    ['cus', ['cus_…']],
    ['whe', ['<endpointId>', 'whe_…']],
    ['dlv', ['<dlv_…>', 'dlv_…', '<deliveryId>']],
  ];
  for (const [prefix, names] of ids) {
    const id = first(new RegExp(`\\b${prefix}_[a-z0-9]{6,}\\b(?!…)`));
    if (id) for (const name of names) values[name] = id[0];
  }
}

/** The command with its placeholders and example addresses replaced; throws on one with no value yet. */
function fill(code: string, values: Values, addresses: [string, string][]): string {
  let out = code;
  for (const [example, real] of addresses) out = out.split(example).join(real);
  // Longest first, so `<dlv_…>` is replaced before `dlv_…`.
  for (const name of Object.keys(values).sort((a, b) => b.length - a.length)) {
    if (values[name]) out = out.split(name).join(values[name]!);
  }
  const left = /<[A-Za-z]+>|\b[a-z]{2,4}_…/.exec(out);
  if (left) throw new Error(`placeholder ${left[0]} has no value: no earlier command printed one`);
  return out;
}

/** What a `# →` line promises: its quoted strings and long hex digests (none with an ellipsis). */
function promised(expectation: string): string[] {
  const quoted = [...expectation.matchAll(/"([^"]{3,})"/g)].map((m) => m[1]);
  const hex = expectation.match(/\b[0-9a-f]{16,}\b/g) ?? [];
  return [...quoted, ...hex].filter((s) => !s.includes('…'));
}

/** A fresh environment for the reader's shell and the server: nothing of vitest's, nor of this machine's Diwan settings. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(VITEST|TINYPOOL|DIWAN_|NODE_ENV$|NODE_OPTIONS$|DATA_DIR$|PORT$|HOST$)/.test(k)) env[k] = v;
  }
  return { ...env, DIWAN_LANG: 'en', ...extra };
}

function remaining(): number {
  return Math.max(1_000, Math.min(COMMAND_MS, FILE_MS - (Date.now() - startedAt)));
}

async function until(what: string, check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The server under test: the README's `npm start`, on a free loopback port (PORT=0). */
async function startServer(dataDir: string, keyFile: string): Promise<{ child: ChildProcess; port: number; log: () => string }> {
  const child = spawn('npm', ['start'], {
    cwd: REPO,
    // Its own process group: npm, tsx and the server stop together.
    detached: true,
    env: cleanEnv({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DIWAN_KEY_FILE: keyFile, DIWAN_WEBHOOK_ALLOW_LOOPBACK: '1' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (d) => (log += d));
  child.stderr!.on('data', (d) => (log += d));
  let port = 0;
  await until(`the server to listen (log: ${log.slice(-2000)})`, () => {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}:\n${log.slice(-4000)}`);
    port = Number(/listening on http:\/\/localhost:(\d+)/.exec(log)?.[1] ?? 0);
    return port > 0;
  }, 60_000);
  return { child, port, log: () => log };
}

/** A reader's terminal: one bash, fed one command at a time; its output goes to a file per command. */
class Terminal {
  private child: ChildProcess;
  private stdout = '';
  /** bash's own complaints (a syntax error ends the shell before the command's output file). */
  stderr = '';
  private n = 0;
  readonly background: number[] = [];
  constructor(readonly dir: string, cwd: string, env: NodeJS.ProcessEnv) {
    // detached: the shell leads a process group of its own, so it and its children stop together.
    this.child = spawn('bash', ['--noprofile', '--norc'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.child.stdout!.on('data', (d) => (this.stdout += d));
    this.child.stderr!.on('data', (d) => (this.stderr += d));
    // -m: a background job gets a process group of its own too, so stopping it stops its children.
    this.child.stdin!.write('set -euo pipefail; set -m\n');
  }

  outputOf(n: number): string {
    const file = path.join(this.dir, `out.${n}`);
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  }

  /** Runs `code` in the shell; resolves with its exit status and output. */
  async run(code: string): Promise<{ status: number | string; output: string; n: number }> {
    const n = ++this.n;
    const out = path.join(this.dir, `out.${n}`);
    this.child.stdin!.write(`{\n${code}\n} >'${out}' 2>&1 </dev/null\necho "__done_${n} $?"\n`);
    const ms = remaining();
    try {
      await until(`the command (${ms / 1000} s at most)`, () => {
        if (this.child.exitCode !== null || this.child.signalCode) return true;
        return this.stdout.includes(`__done_${n} `);
      }, ms);
    } catch (err) {
      this.stop();
      return { status: `killed: ${(err as Error).message}`, output: this.outputOf(n), n };
    }
    const done = new RegExp(`__done_${n} (\\d+)`).exec(this.stdout);
    // set -e ends the shell at a failing command: its exit code is the command's.
    const status = done ? Number(done[1]) : this.child.exitCode ?? String(this.child.signalCode);
    return { status, output: this.outputOf(n), n };
  }

  /** Starts `code` in the background; its output goes to out.<n>. */
  async start(code: string): Promise<number> {
    const n = ++this.n;
    const out = path.join(this.dir, `out.${n}`);
    this.child.stdin!.write(`{\n${code}\n} >'${out}' 2>&1 </dev/null &\necho "__bg_${n} $!"\n`);
    await until('the background job to start', () => new RegExp(`__bg_${n} \\d+`).test(this.stdout), 10_000);
    this.background.push(Number(new RegExp(`__bg_${n} (\\d+)`).exec(this.stdout)![1]));
    return n;
  }

  stopBackground(): void {
    for (const pid of this.background.splice(0)) kill(-pid);
  }

  stop(): void {
    this.stopBackground();
    if (this.child.pid) kill(-this.child.pid);
  }
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

describe('the commands of README.md and docs/*.md, run as written', () => {
  const cleanups: (() => void)[] = [];
  afterAll(() => {
    for (const c of cleanups.reverse()) c();
  });

  for (const doc of DOCUMENTS) {
    const all = blocks(doc);
    if (!all.length) continue;
    const runnable = all.filter((b) => !b.skip);
    const name = `${doc}: ${runnable.length} of ${all.length} blocks${all.some((b) => b.skip) ? ` (not run: ${all.filter((b) => b.skip).map((b) => `line ${b.line}, ${b.skip}`).join('; ')})` : ''}`;
    // Each document has its own host and folder: they run side by side.
    it.skipIf(!runnable.length).concurrent(name, async () => {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), 'diwan-docs-'));
      cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
      const [work, dataDir, outDir] = ['work', 'data', 'out'].map((d) => path.join(root, d));
      for (const d of [work, dataDir, outDir]) fs.mkdirSync(d);
      // `npx diwan` in this folder runs the checkout's CLI, as in the checkout itself.
      fs.mkdirSync(path.join(work, 'node_modules', '.bin'), { recursive: true });
      fs.symlinkSync(path.join(REPO, 'cli', 'bin.js'), path.join(work, 'node_modules', '.bin', 'diwan'));
      const keyFile = path.join(root, 'secret-keys.json');
      // Example addresses and what they stand for here (the server's, once it is up).
      const addresses: [string, string][] = [];

      const needsHost = runnable.some((b) => b.commands.some((c) => /\bdiwan\b|localhost|example\.com|_…/.test(c.code)));
      let port = 0;
      let serverLog = () => '';
      const received: string[] = [];
      if (needsHost) {
        const receiver = http.createServer((req, res) => {
          req.resume();
          req.on('end', () => {
            received.push(`${req.method} ${req.url}`);
            res.statusCode = 500;
            res.end('the test receiver fails every delivery');
          });
        });
        await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
        cleanups.push(() => receiver.close());
        const server = await startServer(dataDir, keyFile);
        cleanups.push(() => kill(-server.child.pid!));
        port = server.port;
        serverLog = server.log;
        const receiverOrigin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
        addresses.push(
          ['https://example.com', receiverOrigin],
          ['http://localhost:4000', receiverOrigin],
          ['https://diwan.example.com', `http://127.0.0.1:${port}`],
          ['localhost:3000', `localhost:${port}`],
        );
      }
      addresses.push(['~/diwan', REPO]);

      const env = cleanEnv({
        // `diwan` on the PATH, as after the README's `npm link`.
        PATH: `${path.join(work, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`,
        DATA_DIR: dataDir,
        PORT: String(port),
        DIWAN_URL: `http://127.0.0.1:${port}`,
        DIWAN_KEY_FILE: keyFile,
        // The receiver is on loopback; the CLI checks endpoint URLs itself, so it needs this too.
        DIWAN_WEBHOOK_ALLOW_LOOPBACK: '1',
        npm_config_offline: 'true',
        npm_config_update_notifier: 'false',
        npm_config_fund: 'false',
        npm_config_audit: 'false',
      });
      const terminal = new Terminal(outDir, work, env);
      cleanups.push(() => terminal.stop());
      const values: Values = {};

      const prelude: Block = { doc: `${doc} (prelude: the README's first steps)`, line: 0, commands: PRELUDE.map((text) => ({ line: 0, text, code: text })) };
      const sequence = doc !== 'README.md' && needsHost ? [prelude, ...runnable] : runnable;
      for (const block of sequence) {
        for (const command of block.commands) {
          const where = `${block.doc}:${command.line} (the block at line ${block.line})\n$ ${command.text}`;
          let code: string;
          try {
            code = fill(command.code, values, addresses);
          } catch (err) {
            throw new Error(`${where}\n${(err as Error).message}`);
          }
          if (/\b(diwan start|npm start|npm run start)\b/.test(code)) {
            // The server is this test's own: check it answers instead of starting a second one.
            const res = await fetch(`http://127.0.0.1:${port}/healthz`);
            expect(res.status, `${where}\nthe test's server does not answer /healthz`).toBe(200);
            continue;
          }
          if (/\bdiwan listen\b/.test(code)) {
            const n = await terminal.start(code);
            await until(`"Ready" from diwan listen`, () => /Ready/.test(terminal.outputOf(n)), remaining()).catch((err: Error) => {
              throw new Error(`${where}\n${err.message}; its output:\n${terminal.outputOf(n)}`);
            });
            continue;
          }
          const before = received.length;
          const { status, output } = await terminal.run(code);
          if (status !== 0) {
            throw new Error(`${where}\nexit status ${status}; the command as run:\n${code}\nits output:\n${output.slice(-4000)}${terminal.stderr}${needsHost ? `\n(server log, last lines:\n${serverLog().slice(-1500)})` : ''}`);
          }
          if (command.expect) {
            for (const s of promised(command.expect)) expect(output, `${where}\nthe document says it prints ${JSON.stringify(s)}`).toContain(s);
          }
          capture(output, values);
          if (/\bdiwan events trigger\b/.test(code)) {
            await until('the test event to reach the receiver', () => received.length > before, 20_000).catch((err: Error) => {
              throw new Error(`${where}\n${err.message}\n(server log:\n${serverLog().slice(-2000)})`);
            });
          }
        }
        terminal.stopBackground();
      }
      terminal.stop();
    }, FILE_MS);
  }
});
