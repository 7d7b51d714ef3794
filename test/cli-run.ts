// Runs the `diwan` command as an operator does (`node cli/bin.js …`) in a child process and
// answers its exit code, its output and, when stdout is exactly one JSON document, that document.
import { execFile } from 'node:child_process';
import path from 'node:path';

export const CLI_BIN = path.resolve(import.meta.dirname, '..', 'cli', 'bin.js');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (undefined when it is not one document). */
  json: any;
}

/** `env` is the whole environment of the child; a run longer than a minute fails. */
export function runCli(args: string[], opts: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI_BIN, ...args], { env: opts.env, cwd: opts.cwd, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr, json });
    });
  });
}
