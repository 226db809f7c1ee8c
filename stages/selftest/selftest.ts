/**
 * `telebench run selftest`: a pipeline of no-op items that exercises the engine on this machine
 * (planning, concurrency, resume, interruption). Each item optionally waits `delay_ms` and appends
 * `<key> <attempt>` to `attempts_log`, which is how the fault test proves that a resume after
 * SIGKILL repeats at most the in-flight items.
 */
import { appendFileSync, existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { resolve, dirname } from 'node:path';
import { z } from 'zod';
import { defineStage, type Pipeline } from '../../pipeline/stage.js';
import { SkipItem, TelebenchError } from '../../pipeline/errors.js';

export const selftestConfigSchema = z.strictObject({
  /** Number of items the `selftest.items` stage plans. */
  items: z.number().int().min(0).max(10_000_000).default(100),
  /** Milliseconds each item waits (simulates work). */
  delay_ms: z.number().int().min(0).default(0),
  /** Milliseconds each item computes without yielding (simulates CPU-bound work: parsing, tokenising). */
  busy_ms: z.number().int().min(0).default(0),
  /** Items run at once. */
  concurrency: z.number().int().min(1).default(4),
  /** When set, each attempt appends `<key> <attempt>\n` to this file (relative to the config file). */
  attempts_log: z.string().optional(),
  /** Every n-th item is skipped with reason `selftest_skip` (0: none). */
  skip_every: z.number().int().min(0).default(0),
  /**
   * When true, `selftest.echo` plans one item per done `selftest.items` item and streams: each
   * starts as soon as its own `selftest.items` item is done (logged as `echo:<key> <attempt>
   * <attempt of the item it read>`).
   */
  echo: z.boolean().default(false),
  /**
   * While this file exists (relative to the config file), every n-th item (`fail_every`) fails
   * with `selftest_fail` (tier transient): a retryable failure for tests of exits and resume.
   */
  fail_while_file: z.string().optional(),
  /** With `fail_while_file`: every n-th item fails (default 1: all). */
  fail_every: z.number().int().min(1).default(1),
});
export type SelftestConfig = z.output<typeof selftestConfigSchema>;

interface HasSelftest {
  selftest?: SelftestConfig;
}

const settings = (cfg: HasSelftest): SelftestConfig =>
  cfg.selftest ?? selftestConfigSchema.parse({});

/** Appends `line` to `attempts_log` (if set), then waits `delay_ms`: the start of every attempt. */
async function logAndWait(
  s: SelftestConfig,
  ctx: { configFile: string },
  line: string,
): Promise<void> {
  if (s.attempts_log) appendFileSync(resolve(dirname(ctx.configFile), s.attempts_log), `${line}\n`);
  if (s.delay_ms > 0) await sleep(s.delay_ms);
}

export const selftestItems = defineStage<
  { n: number },
  { n: number; attempt: string },
  HasSelftest
>({
  name: 'selftest.items',
  version: 1,
  needs: [],
  description: 'No-op items that exercise the engine.',
  concurrency: (cfg) => settings(cfg).concurrency,
  *plan(ctx) {
    const n = settings(ctx.config).items;
    const width = String(n).length;
    for (let i = 0; i < n; i++)
      yield { key: `item-${String(i).padStart(width, '0')}`, input: { n: i } };
  },
  async run(item, ctx) {
    const s = settings(ctx.config);
    await logAndWait(s, ctx, `${item.key} ${ctx.attempt}`);
    if (s.busy_ms > 0) {
      const until = Date.now() + s.busy_ms;
      while (Date.now() < until) {
        // busy: no await, like a tokeniser or a parser
      }
    }
    if (
      s.fail_while_file &&
      item.input.n % s.fail_every === 0 &&
      existsSync(resolve(dirname(ctx.configFile), s.fail_while_file))
    ) {
      throw new TelebenchError(
        'selftest_fail',
        `item ${item.key} fails while ${s.fail_while_file} exists`,
        {
          tier: 'transient',
        },
      );
    }
    if (s.skip_every > 0 && item.input.n % s.skip_every === 0) {
      throw new SkipItem('selftest_skip', `item ${item.key} is a multiple of ${s.skip_every}`);
    }
    return { n: item.input.n, attempt: ctx.attempt };
  },
});

/** Streams from `selftest.items` (1:1 by key): the engine's item-level readiness on this machine. */
export const selftestEcho = defineStage<
  { n: number; attempt: string },
  { n: number; read: string },
  HasSelftest
>({
  name: 'selftest.echo',
  version: 1,
  needs: ['selftest.items'],
  description: 'Echoes each selftest.items output as soon as it exists (streaming between stages).',
  concurrency: (cfg) => settings(cfg).concurrency,
  itemNeeds: (item) => ({ 'selftest.items': [item.key] }),
  *plan(ctx) {
    if (!settings(ctx.config).echo) return;
    for (const o of ctx.store.outputs(selftestItems)) yield { key: o.key, input: o.output };
  },
  async run(item, ctx) {
    const s = settings(ctx.config);
    await logAndWait(s, ctx, `echo:${item.key} ${ctx.attempt} ${item.input.attempt}`);
    return { n: item.input.n, read: item.input.attempt };
  },
});

export const selftestSummary = defineStage<
  { count: number; sum: number },
  { count: number; sum: number },
  HasSelftest
>({
  name: 'selftest.summary',
  version: 1,
  needs: ['selftest.items'],
  description: 'Sums the outputs of selftest.items (shows a stage that reads another one).',
  *plan(ctx) {
    let count = 0;
    let sum = 0;
    for (const o of ctx.store.outputs(selftestItems)) {
      count++;
      sum += o.output.n;
    }
    yield { key: 'summary', input: { count, sum } };
  },
  async run(item) {
    return item.input;
  },
});

export const selftestPipeline: Pipeline = {
  name: 'selftest',
  description: 'No-op items that check the engine on this machine.',
  stages: ['selftest.items', 'selftest.echo', 'selftest.summary'],
};
