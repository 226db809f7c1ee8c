#!/usr/bin/env node
// Machine set-up shared by `make run` and `make test` (zx, why: the design card's scripting tool;
// readable shell steps with real error handling). Idempotent: each step checks before it acts.
// Steps are added by the branches that need them (Docker engine, offline base image, ...).
import { $, echo } from 'zx';
import { setTimeout as sleep } from 'node:timers/promises';

$.verbose = false;
const node = (await $`node --version`).stdout.trim();
if (!node.startsWith('v20.') && !node.startsWith('v22.') && !node.startsWith('v24.')) {
  echo(`telebench needs Node 20 or newer, found ${node}`);
  process.exit(2);
}

// --- Docker engine and offline base images (SWE-Bench 5G environments) ---------------------
// The swe5g build/validate stages and their tests need a running Docker engine. On a fresh
// machine (CI) nothing runs: install Debian's docker.io and debootstrap, start dockerd, wait
// until `docker info` answers, then build the offline base images (debootstrap rootfs + the host
// Go toolchain) when they are missing. TELEBENCH_SKIP_DOCKER=1 skips this part.
const which = async (cmd) => (await $`command -v ${cmd}`.nothrow()).exitCode === 0;
const dockerUp = async () => (await $`docker info`.nothrow()).exitCode === 0;

if (process.env.TELEBENCH_SKIP_DOCKER !== '1') {
  const missing = [];
  // The engine, not the client: some machines ship a `docker` client without `dockerd`.
  if (!(await which('dockerd'))) missing.push('docker.io');
  if (!(await which('debootstrap'))) missing.push('debootstrap');
  // meson builds the C fixtures and runs the C fail-to-pass tests on the host (swe5g.testgen).
  if (!(await which('meson'))) missing.push('meson');
  // Executor swarm: its tests start Debian's image registry (2.8) on a loopback port.
  if (!(await which('docker-registry'))) missing.push('docker-registry');
  if (missing.length > 0) {
    echo(`setup: installing ${missing.join(' ')} (apt-get)`);
    const sudo = process.getuid && process.getuid() !== 0 ? ['sudo'] : [];
    await $`${sudo} apt-get update -qq`;
    await $`${sudo} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${missing}`;
  }
  if (!(await dockerUp())) {
    echo('setup: starting dockerd (log: /tmp/telebench-dockerd.log)');
    const sudo = process.getuid && process.getuid() !== 0 ? 'sudo ' : '';
    await $`sh -c ${`${sudo}nohup dockerd >/tmp/telebench-dockerd.log 2>&1 &`}`;
    const deadline = Date.now() + 120_000;
    while (!(await dockerUp())) {
      if (Date.now() > deadline) {
        echo('setup: dockerd did not answer within 120 s; see /tmp/telebench-dockerd.log');
        process.exit(3);
      }
      await sleep(1000);
    }
  }
  // Builds only what is missing (the command checks each image first).
  const r = await $`node bin/telebench.js images base`.nothrow();
  if (r.exitCode !== 0) {
    echo(`setup: building the offline base images failed:\n${r.stdout}${r.stderr}`);
    process.exit(3);
  }
  echo(`setup: ${r.stdout.trim().split('\n').slice(-3).join('; ')}`);
}
