/**
 * Issue 14, section 1: a patch reaches the test tree exactly as git holds it, in both executors
 * (`docker`, `local`) and in release verify. The fixture's fix (a real git repository the test
 * builds) adds a 12-byte binary test fixture that is not UTF-8 (`00 ff fe 80 81 'NGAP' c3 28 00`),
 * a source file with a non-ASCII name (`größe.go`), an executable script (mode 755) and a symlink,
 * and deletes README.md. Its fail-to-pass Go test checks all of them inside the step's tree.
 */
import { describe, it, expect, beforeAll } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerClient } from '../../../pipeline/providers/docker/client.js';
import {
  DockerExecutor,
  LocalExecutor,
  type Executor,
} from '../../../pipeline/providers/docker/executor.js';
import type { Overlay } from '../../../pipeline/providers/docker/overlay.js';
import { exportCleanRepo } from '../../../pipeline/providers/git/repo.js';
import { goFixture, GO_EXACT_F2P, GO_F2P, GO_P2P, NGAP_BIN } from '../../fixtures/repos/go-nil.js';
import { ensureTestBase, resolveFixture, testSettings } from '../../fixtures/repos/harness.js';
import { overlayFor } from '../../../stages/swe5g/validate/validate.js';
import { swe5gVerifier } from '../../../stages/release/verifier.js';
import { swe5gRowOf } from '../../../stages/swe5g/dataset.js';
import { mirrorPath } from '../../../stages/swe5g/resolve/resolve.js';
import type { Resolved } from '../../../stages/swe5g/types.js';
import type { Swe5gRow } from '../../../datasets/index.js';
import { validatedFixture } from './rows.js';

const docker = new DockerClient();
let root: string;
let state: string;
let res: Resolved;
let row: Swe5gRow;
let baseTree: string;
let gold: Overlay;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'verify-exact-'));
  state = join(root, 'state');
  const fx = goFixture(join(root, 'src'), 'exact');
  res = await resolveFixture(fx, state);
  row = swe5gRowOf(
    validatedFixture(res, fx.testgen, {
      FAIL_TO_PASS: [GO_F2P, GO_EXACT_F2P],
      PASS_TO_PASS: GO_P2P,
    }),
    'git',
  )!;
  baseTree = join(root, 'base');
  await exportCleanRepo(mirrorPath(state, res.repo), res.base_commit, baseTree);
  gold = await overlayFor(baseTree, [
    ['test_patch', row.test_patch],
    ['patch', row.patch],
  ]);
  writeFileSync(join(root, 'config.yaml'), 'version: 1\n');
});

describe('a patch arrives exactly as git holds it (issue 14, section 1)', () => {
  it('resolve keeps größe.go in the patch (git quotes the name in the diff header)', () => {
    expect(res.patch).toContain('+++ "b/ngap/gr\\303\\266\\303\\237e.go"');
    expect(res.test_patch).toContain('diff --git a/ngap/testdata/ngap.bin');
    expect(res.test_patch).toContain('GIT binary patch');
  });

  it('the overlay holds bytes, git modes, a symlink and a deletion', () => {
    expect(gold['ngap/testdata/ngap.bin']).toEqual({ content: NGAP_BIN, mode: '100644' });
    expect(gold['ngap/testdata/ngap.bin']!.content).toHaveLength(12);
    expect(gold['scripts/gen.sh']).toEqual({
      content: Buffer.from('#!/bin/sh\necho gen\n'),
      mode: '100755',
    });
    expect(gold['ngap/testdata/link.bin']).toEqual({
      content: Buffer.from('ngap.bin'),
      mode: '120000',
    });
    expect(gold['ngap/größe.go']?.mode).toBe('100644');
    expect(gold['README.md']).toBeNull();
  });

  // What the step's tree holds, as the shell inside it sees it.
  const probe = [
    'od -An -v -tx1 ngap/testdata/ngap.bin | tr -s " \\n" " "; echo',
    'stat -c "%a %F %n" scripts/gen.sh ngap/größe.go',
    'readlink ngap/testdata/link.bin',
    'test -e README.md && echo README_STILL_THERE || echo README_GONE',
  ].join('\n');
  const expected = [
    ' 00 ff fe 80 81 4e 47 41 50 c3 28 00 ',
    '755 regular file scripts/gen.sh',
    '644 regular file ngap/größe.go',
    'ngap.bin',
    'README_GONE',
    '',
  ];
  const runProbe = (executor: Executor, image: string): ReturnType<Executor['run']> =>
    executor.run({
      step: 'probe_exact',
      instance: { image, workdir: '/testbed', sourceDir: baseTree },
      files: gold,
      command: probe,
      collect: [],
      limits: { memory: 256 * 2 ** 20, cpus: 0.5, pids: 64, timeoutMs: 120_000 },
    });

  it('the local executor writes it byte-, mode- and name-exact', async () => {
    const r = await runProbe(new LocalExecutor(), '');
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')).toEqual(expected);
  });

  it('the docker executor writes it byte-, mode- and name-exact', async () => {
    await docker.ping();
    await ensureTestBase(docker);
    const r = await runProbe(new DockerExecutor(docker), testSettings().offline.rootfs_image);
    expect(r.stderr).toBe('');
    // the rootfs image has no README.md at /testbed: deleting it is a no-op there
    expect(r.stdout.split('\n')).toEqual(expected);
  });

  it.each([
    ['local', 'the gold patch resolves, the empty patch does not'],
    ['docker', 'the gold patch resolves in a fresh container'],
  ] as const)('verify with the %s executor: %s', async (executor, _what) => {
    if (executor === 'docker') {
      await docker.ping();
      await ensureTestBase(docker);
    }
    const verifier = swe5gVerifier(
      {
        swe5g: {
          environments:
            executor === 'docker' ? testSettings() : { executor: 'local', test_scope: 'touched' },
        },
      } as never,
      { stateDir: state, configFile: join(root, 'config.yaml') },
    );
    const { summary } = await verifier([row]);
    expect(summary).toMatchObject({
      attempted: 1,
      gold_resolved: 1,
      empty_patch_resolved: 0,
      executor,
      dropped: [],
    });
  });
});
