#!/usr/bin/env node
// The `diwan` command. The CLI is TypeScript: it runs compiled to JavaScript (cli/compile.js,
// brought up to date on each start), so that a command does not wait for tsx's loader; a
// command that loads TypeScript at run time (the host's apps) registers tsx then
// (cli/typescript.ts). Where it cannot be compiled, tsx runs the sources, as the host does.
import { compiledCli } from './compile.js';

const compiled = await compiledCli();
if (compiled) {
  const { main } = await import(compiled);
  await main();
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { main } = await import('./main.ts');
  await main();
}
