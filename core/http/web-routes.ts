// `GET /apps/<id>/…`: each app's web bundle, as files from its folder. The console
// (console-routes.ts) mounts them in its shell.
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { DiwanError } from '../kernel/errors/diwan-error.ts';
import type { AppRuntime } from '../apps/runtime.ts';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json; charset=utf-8', '.svg': 'image/svg+xml', '.png': 'image/png',
};

export function webRoutes(app: FastifyInstance, runtime: AppRuntime): void {
  app.get('/apps/:app/*', async (req, reply) => {
    const { app: id, '*': rest } = req.params as { app: string; '*': string };
    const a = runtime.get(id);
    if (!a?.manifest.web) throw new DiwanError('NOT_FOUND', [{ app: id }]);
    const root = path.resolve(a.source.dir, a.manifest.web);
    const file = path.resolve(root, rest || 'index.html');
    if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) throw new DiwanError('NOT_FOUND', [{ path: req.url }]);
    return reply.type(TYPES[path.extname(file)] ?? 'application/octet-stream').send(fs.createReadStream(file));
  });
}
