/**
 * The dataset entries the release code reads instead of dataset ids: hooks a dataset lacks are
 * clear errors (verify of a dataset without executable rows, `--push` of rows without images), an
 * entry naming an unregistered pipeline is a bug named as such, and SWE-Bench 5G's `publish
 * --push` refuses rows that name an image outside the registry before anything is pushed.
 */
import { describe, it, expect } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATASET_ENTRIES, releaseWiring } from '../../../stages/index.js';
import { imageHooksOf } from '../../../stages/release/release.js';
import { verifyRelease } from '../../../stages/release/verify.js';
import { swe5gEntry, swe5gRowOf } from '../../../stages/swe5g/dataset.js';
import { TelebenchError } from '../../../pipeline/errors.js';
import { validated } from './rows.js';
import { PROJECT_ROOT } from '../../../pipeline/manifest.js';

const codeOf = async (p: Promise<unknown>) =>
  p.then(
    () => 'no error',
    (e: unknown) => (e instanceof TelebenchError ? e.code : String(e)),
  );

describe('dataset entries', () => {
  it('verify of a dataset without a verifier is verify_not_applicable, before reading any release', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'entries-'));
    const code = await codeOf(
      verifyRelease({
        stateDir,
        entry: DATASET_ENTRIES.byName('resilience'),
        version: '1.0.0',
        config: {},
        env: { stateDir, configFile: join(stateDir, 'c.yaml') },
      }),
    );
    expect(code).toBe('verify_not_applicable');
  });

  it('--push is refused for rows without images and accepted for SWE-Bench 5G', () => {
    expect(() => imageHooksOf(DATASET_ENTRIES.byName('trb'), 'publish --push')).toThrow(
      /publish --push: teleresiliencebench rows name no container images/,
    );
    expect(imageHooksOf(DATASET_ENTRIES.byName('swe5g'), 'release --push')).toBe(swe5gEntry.images);
  });

  it('each entry names a registered pipeline; an unknown one is an error naming the known ones', () => {
    for (const e of DATASET_ENTRIES.entries)
      expect(releaseWiring.pipelineStages(e.pipeline)).toContain(e.source);
    expect(() => releaseWiring.pipelineStages('nope')).toThrow(
      /no pipeline "nope" is registered .*known: swe5g, /,
    );
  });

  it('publish --push refuses rows naming an image outside the registry before pushing anything', async () => {
    const row = { ...swe5gRowOf(validated('free5gc/amf', 161), 'api')!, image_name: 'local:tag' };
    const err = await swe5gEntry
      .images!.republish([row], {
        registry: '127.0.0.1:1',
        flag: 'publish --push (swe-bench-5g 1.0.0)',
        log: () => undefined,
      })
      .catch((e: unknown) => e as TelebenchError);
    expect(err).toBeInstanceOf(TelebenchError);
    expect((err as TelebenchError).code).toBe('publish_images_local');
    expect((err as TelebenchError).message).toContain(
      "1 row(s) do not name an image in 127.0.0.1:1 (e.g. free5gc__amf-161: 'local:tag')",
    );
  });

  it('no generic release or engine code names a dataset id (only the entries and their hooks do)', () => {
    // ids only: the aliases `swe5g` and `resilience` are also pipeline and config-section names
    const ids = DATASET_ENTRIES.entries.map((e) => e.definition.id);
    const literal = new RegExp(`['"\`](${ids.join('|')})['"\`]`);
    const code = (f: string) =>
      readFileSync(join(PROJECT_ROOT, f), 'utf8')
        .split('\n')
        .filter((l) => !/^\s*(\*|\/\/|\/\*)/.test(l))
        .join('\n');
    const hooks = new Set(['verifier.ts', 'push.ts']); // SWE-Bench 5G's verify and image hooks
    const files = [
      ...readdirSync(join(PROJECT_ROOT, 'stages', 'release'))
        .filter((f) => f.endsWith('.ts') && !hooks.has(f))
        .map((f) => join('stages', 'release', f)),
      ...readdirSync(join(PROJECT_ROOT, 'pipeline'), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts'))
        .map((f) => join('pipeline', f)),
    ];
    expect(files.length).toBeGreaterThan(20);
    const naming = files.filter((f) => literal.test(code(f)));
    expect(naming).toEqual([]);
  });
});
