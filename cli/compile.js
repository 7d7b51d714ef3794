// The CLI's TypeScript (cli/, core/, sdk/) compiled to JavaScript once, so that a command
// starts without tsx's loader, which alone takes longer than a read command's whole budget.
// Each file is transformed on its own by esbuild into a mirror of the tree under
// node_modules/.cache/diwan-cli/, and again only when its source is newer. `import.meta.url`
// and `import.meta.dirname` keep naming the source file, so paths read relative to it (the
// templates, the repository root, the signing worker) are the same as under tsx. A relative
// import of a TypeScript file outside the mirrored folders keeps its source path (tsx loads it).
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..');
const FOLDERS = ['cli', 'core', 'sdk'];
const OUT = path.join(ROOT, 'node_modules', '.cache', 'diwan-cli');

function sources(dir, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'templates' && e.name !== 'node_modules') sources(p, out);
    } else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const outPath = (src) => path.join(OUT, path.relative(ROOT, src)).replace(/\.ts$/, '.js');
const mirrored = (file) => FOLDERS.some((f) => file.startsWith(path.join(ROOT, f) + path.sep));

/** The compiled form of one source: imports point at compiled siblings, or at sources outside. */
function compile(esbuild, src) {
  const dir = path.dirname(src);
  const { code } = esbuild.transformSync(fs.readFileSync(src, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcefile: src,
    define: { 'import.meta.dirname': JSON.stringify(dir), 'import.meta.url': JSON.stringify(pathToFileURL(src).href), __DIWAN_COMPILED__: 'true' },
  });
  return code.replace(/((?:from|import)\s*\(?\s*)(['"])(\.{1,2}\/[^'"]+)\2/g, (all, lead, q, spec) => {
    const target = path.resolve(dir, spec);
    if (target.endsWith('.ts') && mirrored(target)) {
      let rel = path.relative(path.dirname(outPath(src)), outPath(target)).split(path.sep).join('/');
      if (!rel.startsWith('.')) rel = `./${rel}`;
      return `${lead}${q}${rel}${q}`;
    }
    return `${lead}${q}${pathToFileURL(target).href}${q}`;
  });
}

/**
 * The compiled `cli/main.js`, brought up to date first; null when it cannot be (no esbuild, a
 * read-only folder): the caller then runs the TypeScript through tsx.
 */
export async function compiledCli() {
  try {
    // The compiled files name their sources by absolute path: a moved folder compiles anew.
    const stamp = path.join(OUT, 'root');
    let sameRoot = false;
    try {
      sameRoot = fs.readFileSync(stamp, 'utf8') === ROOT;
    } catch {
      // never compiled here
    }
    const stale = [];
    for (const folder of FOLDERS) {
      for (const src of sources(path.join(ROOT, folder))) {
        const out = outPath(src);
        let fresh = false;
        try {
          fresh = fs.statSync(out).mtimeMs >= fs.statSync(src).mtimeMs;
        } catch {
          // not compiled yet
        }
        if (!fresh || !sameRoot) stale.push(src);
      }
    }
    if (stale.length) {
      const { default: esbuild } = await import('esbuild');
      for (const src of stale) {
        const out = outPath(src);
        fs.mkdirSync(path.dirname(out), { recursive: true });
        // Written whole, then renamed: commands started side by side never read half a file.
        const tmp = `${out}.${process.pid}.tmp`;
        fs.writeFileSync(tmp, compile(esbuild, src));
        fs.renameSync(tmp, out);
      }
      fs.writeFileSync(`${stamp}.${process.pid}.tmp`, ROOT);
      fs.renameSync(`${stamp}.${process.pid}.tmp`, stamp);
    }
    return pathToFileURL(outPath(path.join(ROOT, 'cli', 'main.ts'))).href;
  } catch {
    return null;
  }
}
