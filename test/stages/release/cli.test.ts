/**
 * The release commands through the real CLI (`node bin/telebench.js`, a child process) on a real
 * state directory: `release` (written, then a no-op, then refused with other content), `publish
 * --dry-run` and `publish` against the local Hub server named in the configuration, a bad HF_TOKEN.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startHubServer, type HubServer } from '../../servers/hub-server.js';
import { openState } from '../../../pipeline/state.js';
import { sha256 } from '../../../pipeline/hash.js';
import { PROJECT_ROOT } from '../../../pipeline/manifest.js';
import { registry } from '../../../stages/index.js';
import { resilienceInstance } from './rows.js';

const run = promisify(execFile);
const TOKEN = 'hf_cli_test_token_456';

async function cli(args: string[], env: Record<string, string> = {}) {
  try {
    const r = await run('node', [join(PROJECT_ROOT, 'bin/telebench.js'), ...args], {
      env: { ...process.env, HF_TOKEN: '', ...env },
      cwd: PROJECT_ROOT,
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Puts a done `resilience.instances` item whose file holds `instances` into the store. */
function storeInstances(state: string, instances: Record<string, unknown>[]): void {
  const dir = join(state, 'resilience', 'instances');
  mkdirSync(dir, { recursive: true });
  const text = instances.map((i) => JSON.stringify(i)).join('\n') + '\n';
  writeFileSync(join(dir, 'instances.jsonl'), text);
  const s = openState(state);
  const version = registry.get('resilience.instances')!.version;
  const input = JSON.stringify({ n: instances.length });
  s.store.planItem('resilience.instances', 'instances', version, sha256(input), input, false);
  s.store.startItem('resilience.instances', 'instances', 'a1', 'run1');
  s.store.finishItem('resilience.instances', 'instances', 'a1', {
    state: 'done',
    output: {
      dir,
      files: {
        instances: {
          path: join(dir, 'instances.jsonl'),
          rows: instances.length,
          sha256: sha256(text),
        },
      },
    },
  });
  s.close();
}

describe('telebench release / publish', () => {
  let hub: HubServer;
  let state: string;
  let config: string;
  beforeAll(async () => {
    hub = await startHubServer({ tokens: { [TOKEN]: 'telebench' } });
    state = mkdtempSync(join(tmpdir(), 'cli-rel-'));
    config = join(state, 'config.yaml');
    writeFileSync(config, `version: 1\nrelease:\n  hub:\n    url: ${hub.url}\n`);
  });
  afterAll(() => hub.close());

  it('run: the summary names the folder a release stage wrote (it was only in the JSON log)', async () => {
    const own = mkdtempSync(join(tmpdir(), 'cli-rel-run-'));
    storeInstances(own, [resilienceInstance('teleqna', 4), resilienceInstance('telemath', 1)]);
    const r = await cli([
      '--state',
      own,
      'run',
      'all',
      '--only',
      'release.resilience',
      '--config',
      config,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(
        `^ {6}written: ${own.replaceAll('.', '\\.')}/releases/teleresiliencebench/\\S+ \\(2 rows\\)$`,
        'm',
      ),
    );
  });

  it('an unknown dataset, --push on rows without images, an unknown release.sources key: exit 2 naming them', async () => {
    const own = mkdtempSync(join(tmpdir(), 'cli-rel-bad-'));
    storeInstances(own, [resilienceInstance('teleqna', 4)]);
    const unknown = await cli(['--state', own, 'release', 'glue', '--version', '1.0.0']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /unknown dataset "glue"; known: swe-bench-5g .*teleresiliencebench/,
    );
    const push = await cli([
      '--state',
      own,
      'release',
      'resilience',
      '--version',
      '1.0.0',
      '--push',
      '127.0.0.1:5000',
      '--config',
      config,
    ]);
    expect(push.code).toBe(2);
    expect(push.stderr).toContain(
      'release --push: teleresiliencebench rows name no container images, so there is nothing to push',
    );
    const badSource = join(own, 'bad-source.yaml');
    writeFileSync(badSource, 'version: 1\nrelease:\n  sources:\n    swe5g: swe5g.validate\n');
    const source = await cli([
      '--state',
      own,
      'release',
      'resilience',
      '--version',
      '1.0.0',
      '--config',
      badSource,
    ]);
    expect(source.code).toBe(2);
    expect(source.stderr).toContain('release.sources.swe5g: no dataset is registered as "swe5g"');
    expect(existsSync(join(own, 'releases'))).toBe(false);
  });

  it('releases, is a no-op the second time, refuses other content under the same version', async () => {
    storeInstances(state, [resilienceInstance('teleqna', 4), resilienceInstance('telemath', 1)]);
    const first = await cli([
      '--state',
      state,
      'release',
      'resilience',
      '--version',
      '1.0.0',
      '--config',
      config,
    ]);
    expect(first.stderr).toContain('written');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^released: teleresiliencebench 1\.0\.0/);
    const again = await cli([
      '--state',
      state,
      'release',
      'resilience',
      '--version',
      '1.0.0',
      '--config',
      config,
    ]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('already released with identical content (no-op)');
    storeInstances(state, [
      resilienceInstance('teleqna', 4),
      resilienceInstance('telemath', 1),
      resilienceInstance('teleqna', 5),
    ]);
    const other = await cli([
      '--state',
      state,
      'release',
      'resilience',
      '--version',
      '1.0.0',
      '--config',
      config,
    ]);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/already released with different content .*never changed/);
  });

  it('publish --dry-run lists what would change; publish uploads and tags; a bad token exits with a clear 401', async () => {
    const dry = await cli([
      '--state',
      state,
      'publish',
      'resilience',
      '1.0.0',
      '--dry-run',
      '--config',
      config,
    ]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('dry run: would create telebench/teleresiliencebench');
    // the Hub unreachable: a missing outside service, exit 3 as for every command
    const offline = join(state, 'offline.yaml');
    writeFileSync(offline, 'version: 1\nrelease:\n  hub:\n    url: http://127.0.0.1:9\n');
    const down = await cli([
      '--state',
      state,
      'publish',
      'resilience',
      '1.0.0',
      '--dry-run',
      '--config',
      offline,
    ]);
    expect(down.code).toBe(3);
    expect(down.stderr).toContain('hub_unreachable');
    expect(down.stderr).toContain('not reachable');
    expect(down.stderr).not.toContain('internal error');
    expect(dry.stdout).toMatch(/\+ add\s+data\/teleqna\/test\.parquet/);
    const bad = await cli(
      ['--state', state, 'publish', 'resilience', '1.0.0', '--config', config],
      { HF_TOKEN: 'hf_wrong_token_789' },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/401.*HF_TOKEN/);
    expect(bad.stderr).not.toContain('hf_wrong_token_789');
    const ok = await cli(['--state', state, 'publish', 'resilience', '1.0.0', '--config', config], {
      HF_TOKEN: TOKEN,
    });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      /published teleresiliencebench 1\.0\.0 to telebench\/teleresiliencebench: commit [0-9a-f]{40}, tag 1\.0\.0/,
    );
    expect(hub.tags('telebench/teleresiliencebench').get('1.0.0')).toBe(
      hub.head('telebench/teleresiliencebench'),
    );
  });

  describe('output of the scripted test server', () => {
    it('is refused at release with the reason, unless release.allow_scripted_output is set', async () => {
      const state = mkdtempSync(join(tmpdir(), 'cli-rel-scripted-'));
      const scripted = (subset: string, row: number) => {
        const i = resilienceInstance(subset, row);
        (i.generator as Record<string, unknown>).server_version = '0.12.6-telebench-scripted';
        return i;
      };
      storeInstances(state, [scripted('teleqna', 1), resilienceInstance('teleqna', 2)]);
      const config = join(state, 'config.yaml');
      writeFileSync(config, 'version: 1\n');
      const refused = await cli([
        '--state',
        state,
        'release',
        'resilience',
        '--version',
        '1.0.0',
        '--config',
        config,
      ]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(
        '1 of 2 teleresiliencebench rows were generated by the scripted test server',
      );
      expect(refused.stderr).toContain('release.allow_scripted_output: true');
      const allowed = join(state, 'allowed.yaml');
      writeFileSync(allowed, 'version: 1\nrelease:\n  allow_scripted_output: true\n');
      const ok = await cli([
        '--state',
        state,
        'release',
        'resilience',
        '--version',
        '1.0.0',
        '--config',
        allowed,
      ]);
      expect(ok.code, ok.stderr).toBe(0);
      const card = readFileSync(
        join(state, 'releases', 'teleresiliencebench', '1.0.0', 'README.md'),
        'utf8',
      );
      expect(card).toContain('1 rows come from the scripted test server');
    });
  });
});
