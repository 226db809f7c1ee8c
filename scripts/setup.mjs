#!/usr/bin/env node
// Machine set-up shared by `make run` and `make test` (zx, why: the design card's scripting tool;
// readable shell steps with real error handling). Idempotent: each step checks before it acts.
// Steps are added by the branches that need them (Docker engine, offline base image, ...).
import { $, echo } from 'zx';

$.verbose = false;
const node = (await $`node --version`).stdout.trim();
if (!node.startsWith('v20.') && !node.startsWith('v22.') && !node.startsWith('v24.')) {
  echo(`telebench needs Node 20 or newer, found ${node}`);
  process.exit(2);
}
