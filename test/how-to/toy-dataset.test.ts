// docs/how-to/add-a-dataset.md, done once: a third dataset, 3GPP Words, defined only in
// test/how-to/toy-dataset/ (schema and card, its stages, its entry) and registered beside the two
// real entries in one call. It goes through the real runner into a release folder (JSON Lines,
// Parquet, card, manifest), is released again under a version and published to the local Hub
// counterpart, without any generic code knowing its id.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPipeline, storeReader, type StageRegistry } from '../../pipeline/runner.js';
import { openState, type OpenState } from '../../pipeline/state.js';
import { EventBus } from '../../pipeline/events.js';
import type { Pipeline, Stage } from '../../pipeline/stage.js';
import { TelebenchError } from '../../pipeline/errors.js';
import { DATASET_ENTRIES } from '../../stages/index.js';
import { datasetRegistry } from '../../stages/release/entry.js';
import { imageHooksOf, releaseDataset, type ReleaseWiring } from '../../stages/release/release.js';
import { localReleaseStages } from '../../stages/release/stage.js';
import { readManifest, readReleaseRows } from '../../stages/release/assemble.js';
import { parquetToRows } from '../../stages/release/parquet.js';
import { publishRelease } from '../../stages/release/publish.js';
import { verifyRelease } from '../../stages/release/verify.js';
import { startHubServer, type HubServer } from '../servers/hub-server.js';
import { wordsEntry } from './toy-dataset/dataset.js';
import { wordsPipeline } from './toy-dataset/stages.js';

// The one registration: the toy entry beside the real ones.
const datasets = datasetRegistry([...DATASET_ENTRIES.entries, wordsEntry]);

const TOKEN = 'hf_words_token_789';
const config = {
  version: 1,
  words: {
    terms: {
      amf: {
        series: 'TS 23',
        definition: 'Access and Mobility Management Function',
        sources: ['TS 23.501'],
      },
      gnb: { series: 'TS 38', definition: 'NR base station', sources: ['TS 38.300'] },
      'pdu-session': {
        series: 'TS 23',
        definition: 'An association between the UE and a data network',
        sources: ['TS 23.501', 'TS 24.501'],
      },
      smf: { series: 'TS 23', definition: '   ', sources: [] },
    },
  },
};

let dir: string;
let state: OpenState;
let hub: HubServer;
let ran: string[];
// What stages/index.ts does with every entry: its stages and pipelines, then a release stage each.
const pipelines = new Map<string, Pipeline>(
  datasets.entries.flatMap((e) => e.pipelines ?? []).map((p) => [p.name, p]),
);
const wiring: ReleaseWiring = {
  datasets,
  pipelineStages: (name) => pipelines.get(name)?.stages ?? [],
  stageVersion: (name) => registry.get(name)?.version,
};
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const registry: StageRegistry = new Map<string, Stage<any, any, any>>(
  [...datasets.entries.flatMap((e) => e.stages ?? []), ...localReleaseStages(wiring)].map((s) => [
    s.name,
    s,
  ]),
);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'words-'));
  state = openState(dir);
  hub = await startHubServer({ tokens: { [TOKEN]: 'telebench' } });
});
afterAll(async () => {
  state.close();
  await hub.close();
  rmSync(dir, { recursive: true, force: true });
});

async function runWords() {
  const bus = new EventBus();
  ran = [];
  bus.on((e) => {
    if (e.kind === 'item-start') ran.push(`${e.stage}:${e.key}`);
  });
  return runPipeline({
    pipeline: {
      ...wordsPipeline,
      name: 'words-all',
      stages: [...wordsPipeline.stages, 'release.words'],
    },
    registry,
    config,
    configFile: join(dir, 'config.yaml'),
    stateDir: dir,
    store: state.store,
    blobs: state.blobs,
    bus,
    signal: new AbortController().signal,
  });
}

describe('how-to: add a dataset (3GPP Words, defined only in this test folder)', () => {
  it('its release stage follows its source stage and writes a release folder of its rows', async () => {
    expect(registry.get('release.words')!.needs).toEqual(['words.count']);
    const result = await runWords();
    expect(result.exitCode).toBe(0);
    expect(result.stages['release.words']!.status).toBe('completed');
    const [version] = readdirSync(join(dir, 'releases', '3gpp-words'));
    expect(version).toMatch(/^0\.0\.0-local\.[0-9a-f]{12}$/);
    const rel = join(dir, 'releases', '3gpp-words', version!);
    const rows = readReleaseRows(rel);
    expect(rows.map((r) => r.term_id)).toEqual(['amf', 'pdu-session', 'gnb']);
    expect(rows.find((r) => r.term_id === 'pdu-session')).toEqual({
      term_id: 'pdu-session',
      series: 'TS 23',
      definition: 'An association between the UE and a data network',
      words: 9,
      sources: ['TS 23.501', 'TS 24.501'],
      license: 'CC-BY-4.0',
    });
    const manifest = readManifest(rel)!;
    expect(manifest.counts.by_config).toEqual({ ts23: 2, ts38: 1 });
    expect(manifest.stage_versions).toEqual({ 'words.terms': 1, 'words.count': 1 });
    const parquet = await parquetToRows(
      readFileSync(join(rel, 'data', 'ts23', 'test.parquet')),
      wordsEntry.definition.fields,
    );
    expect(parquet).toEqual(rows.filter((r) => r.series === 'TS 23'));
    const card = readFileSync(join(rel, 'README.md'), 'utf8');
    expect(card).toContain('pretty_name: 3GPP Words');
    expect(card).toContain('| words.count | 3 | 1 | 0 | empty_definition 1 |');
    expect(card).toContain('config_name: all');
  });

  it('a second run repeats nothing and leaves the release as it is', async () => {
    const result = await runWords();
    expect(result.exitCode).toBe(0);
    expect(ran).toEqual([]);
    expect(readdirSync(join(dir, 'releases', '3gpp-words'))).toHaveLength(1);
  });

  it('is released under a version and published to the local Hub; verify and --push say why not', async () => {
    const out = await releaseDataset({
      ctx: {
        store: storeReader(state.store, wiring.stageVersion),
        config,
        stateDir: dir,
        log: () => undefined,
      },
      wiring,
      entry: datasets.byName('words'),
      version: '1.0.0',
      verifier: null,
    });
    expect(out.status).toBe('written');
    expect(out.manifest.counts.rows).toBe(3);
    const pub = await publishRelease({
      stateDir: dir,
      dataset: '3gpp-words',
      version: '1.0.0',
      target: { hubUrl: hub.url, repo: 'telebench/3gpp-words', accessToken: TOKEN },
      branch: 'main',
      private: false,
      dryRun: false,
    });
    expect(pub.status).toBe('published');
    expect(hub.tags('telebench/3gpp-words').get('1.0.0')).toBe(hub.head('telebench/3gpp-words'));
    const files = hub.filesAt('telebench/3gpp-words', '1.0.0')!;
    expect([...files.keys()].sort()).toEqual([
      '.gitattributes',
      'CHANGELOG.md',
      'README.md',
      'data/ts23/test.jsonl',
      'data/ts23/test.parquet',
      'data/ts38/test.jsonl',
      'data/ts38/test.parquet',
      'manifest.json',
    ]);
    const err = await verifyRelease({
      stateDir: dir,
      entry: datasets.byName('3gpp-words'),
      version: '1.0.0',
      config,
      env: { stateDir: dir, configFile: join(dir, 'config.yaml') },
    }).catch((e: unknown) => e as TelebenchError);
    expect((err as TelebenchError).code).toBe('verify_not_applicable');
    expect(() => imageHooksOf(wordsEntry, 'release --push')).toThrow(
      /3gpp-words rows name no container images/,
    );
  });
});
