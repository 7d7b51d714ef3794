#!/usr/bin/env node
// The `diwan` command. The CLI is TypeScript run by tsx, like the host: register tsx's ESM
// hooks for this process, then hand over to main.ts.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./main.ts');
await main();
