#!/usr/bin/env node
// Entry point of the `telebench` command: loads the TypeScript sources through tsx (why: no build
// step to forget, the sources are what runs) and hands over to pipeline/cli/main.ts.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../pipeline/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
