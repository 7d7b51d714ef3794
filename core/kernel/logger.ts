// The logger every part is handed (the server's is Fastify's pino; pino's `(object, message)`
// order): a structured record and a message, never a string built from secrets.
export interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** For processes with nowhere to log (a CLI command prints its own result). */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
