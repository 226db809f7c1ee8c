/**
 * The summary `telebench run` prints on stderr when it ends: one line per stage (items by state,
 * how many ran), then what a person needs to act on it: skip reasons, failed codes with their
 * latest message and where the rest is, the folder a release wrote, and the stages a preflight
 * stop held back (on one line under it). Read-only over the run's result and the store.
 */
import type { RunResult, StageOutcome } from '../runner.js';
import type { OpenState } from '../state.js';
import { registry } from '../../stages/index.js';
import { selfCommand, shellQuote } from './main.js';

type Store = OpenState['store'];

/** The `run` flags the summary words depend on. */
export interface SummaryFlags {
  dryRun?: boolean;
  limit?: number;
  state?: string;
}

/**
 * The summary's lines (without the `telebench run ...` head line), in the run's stage order.
 * @param order the stages of the run, in order
 * @returns lines indented by two spaces (a stage) or six (its details)
 */
export function runSummaryLines(
  result: RunResult,
  order: readonly string[],
  flags: SummaryFlags,
  store: Store,
): string[] {
  const lines: string[] = [];
  /** Dry run: stages whose plan reads outputs that do not exist yet (a need would still run). */
  const pending = new Set<string>();
  const behind = heldBack(result, order);
  const folded = new Set([...behind.values()].flat());
  for (const name of order) {
    const o = result.stages[name];
    if (!o || folded.has(name)) continue;
    const waitsOn = (registry.get(name)?.needs ?? []).filter(
      (n) =>
        pending.has(n) ||
        (result.stages[n]?.status === 'completed' &&
          ((result.stages[n] as { wouldRun?: number }).wouldRun ?? 0) > 0),
    );
    if (flags.dryRun && waitsOn.length > 0) pending.add(name);
    if (o.status === 'blocked') {
      lines.push(`  ${name}: stopped — ${o.reason}${o.hint ? `\n      -> ${o.hint}` : ''}`);
      const after = behind.get(name);
      if (after) lines.push(`      not started behind it: ${after.join(', ')}`);
    } else {
      lines.push(
        stageLine(name, o, waitsOn, flags),
        ...stageDetails(name, o, flags, store, result.runId),
      );
    }
  }
  const checked = order.filter((n) => registry.get(n)?.preflight);
  if (flags.dryRun && checked.length)
    lines.push(
      `  (a dry run does not check services; a real run checks them at the start of ${checked.join(', ')} and stops there when one is missing)`,
    );
  return lines;
}

/**
 * Stages that did not start because an upstream preflight stopped, by that stage (a branch behind
 * one missing service printed a 'stopped — needs X' line per stage).
 */
function heldBack(result: RunResult, order: readonly string[]): Map<string, string[]> {
  const behind = new Map<string, string[]>();
  for (const name of order) {
    const o = result.stages[name];
    if (o?.status !== 'blocked' || o.service !== undefined || o.root === undefined) continue;
    if (result.stages[o.root]?.status !== 'blocked') continue;
    behind.set(o.root, [...(behind.get(o.root) ?? []), name]);
  }
  return behind;
}

type Ran = Exclude<StageOutcome, { status: 'blocked' }>;

/** The stage's own line: status, counts (a dry run's are plan decisions), what ran, what did not. */
function stageLine(name: string, o: Ran, waitsOn: string[], flags: SummaryFlags): string {
  const counts = Object.entries(o.counts)
    .filter(([k]) => k !== 'total')
    .map(([k, v]) => `${v} ${flags.dryRun && k === 'run' ? 'to run' : k}`)
    .join(', ');
  const dry = flags.dryRun
    ? ` (dry run: ${o.status === 'completed' ? (o.wouldRun ?? 0) : 0} would run${
        waitsOn.length
          ? `; more once ${waitsOn.join(', ')} ${waitsOn.length > 1 ? 'have' : 'has'} run: its items come from their outputs`
          : ''
      })`
    : '';
  const ran = flags.dryRun ? '' : `; ${o.ran} ran in this run`;
  const abandoned =
    o.status === 'interrupted' && o.abandoned
      ? ` (${o.abandoned} of them stopped unfinished and are pending again: they run on resume)`
      : '';
  const notRetried = o.notRetried
    ? ` (${o.notRetried} had failed in an earlier run and ${flags.dryRun ? 'would not run' : 'did not run'} again: add --retry-failed, or RETRY_FAILED=1 to make run${flags.limit ? '; they count towards --limit' : ''})`
    : '';
  return `  ${name}: ${o.status}${dry} — ${counts || 'no items'}${ran}${abandoned}${notRetried}`;
}

/** The lines under a stage: the folder a release wrote, skip reasons, failed codes and messages. */
function stageDetails(
  name: string,
  o: Ran,
  flags: SummaryFlags,
  store: Store,
  runId: string,
): string[] {
  const out: string[] = [];
  if (!flags.dryRun && name.startsWith('release.'))
    for (const r of store.items(name)) {
      const rel = (r.state === 'done' ? r.output : null) as {
        dir?: string;
        rows?: number;
        status?: string;
      } | null;
      if (rel?.dir)
        out.push(
          `      ${rel.status ?? 'release'}: ${rel.dir}${rel.rows !== undefined ? ` (${rel.rows} rows)` : ''}`,
        );
    }
  if (!flags.dryRun && name === 'swe5g.build') out.push(...evictionLines(store, runId));
  if (!flags.dryRun && (o.counts.skipped ?? 0) > 0) {
    const reasons = Object.entries(store.counts(name).bySkipReason);
    out.push(
      `      skipped: ${reasons
        .slice(0, 6)
        .map(([r, n]) => `${r} ${n}`)
        .join(', ')}${reasons.length > 6 ? `, and ${reasons.length - 6} more reasons` : ''}`,
    );
  }
  if ((o.counts.failed ?? 0) > 0) {
    const cmd = `${[...selfCommand(), ...(flags.state ? ['--state', flags.state] : [])].map(shellQuote).join(' ')} `;
    const codes = Object.entries(store.counts(name).byErrorCode)
      .map(([code, n]) => `${code} ${n}`)
      .join(', ');
    // failures of items this run did not plan (another config, outside a --limit) are old
    const old = (o.failedInPlan ?? 0) === 0 && !flags.dryRun;
    out.push(
      `      failed${old ? " in earlier runs, not in this run's plan" : ''}: ${codes} (messages and hints: ${cmd}items ${name} --state-filter failed, then ${cmd}show ${name} <key>)`,
    );
    // the latest failure of each code: what to fix is often in its message (a download that
    // fails offline names $TELEBENCH_DATA_ROOT), not only behind `show`
    if (!old && !flags.dryRun) out.push(...latestFailures(store, name, 3));
  }
  return out;
}

/**
 * The images `swe5g.build` evicted in run `runId` under `image_budget_gib` (kv `swe5g.evictions`,
 * stages/swe5g/build/eviction.ts): one line, or none.
 */
function evictionLines(store: Store, runId: string): string[] {
  const r = store.get<{
    budget_bytes: number;
    used_before: number;
    used_after: number;
    evicted: { layer: string; bytes: number }[];
  }>('swe5g.evictions', runId);
  if (!r || r.evicted.length === 0) return [];
  const mib = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MiB`;
  const n = (layer: string): number => r.evicted.filter((e) => e.layer === layer).length;
  return [
    `      evicted: ${n('instance')} instance and ${n('env')} env image(s), ${mib(r.used_before - r.used_after)} (this state's images ${mib(r.used_before)} -> ${mib(r.used_after)}, budget ${mib(r.budget_bytes)}; rebuilt from their recipes when a stage needs them)`,
  ];
}

/**
 * The most recently failed item of each error code of `stage` (at most `most` codes), as
 * `      <code>, e.g. <key>: <first line of its message>` (1,000 characters at most).
 */
function latestFailures(store: Store, stage: string, most: number): string[] {
  const latest = new Map<string, { key: string; message: string; at: string }>();
  for (const r of store.items(stage)) {
    if (r.state !== 'failed') continue;
    const e = (r.error ?? {}) as { code?: string; message?: string };
    const code = e.code ?? 'unknown';
    const at = String(r.updatedAt ?? '');
    if ((latest.get(code)?.at ?? '') <= at)
      latest.set(code, { key: r.key, message: String(e.message ?? '').split('\n')[0]!, at });
  }
  return [...latest]
    .sort(([, a], [, b]) => b.at.localeCompare(a.at))
    .slice(0, most)
    .map(([code, f]) => {
      const text = f.message.length > 1000 ? `${f.message.slice(0, 999)}…` : f.message;
      return `      ${code}, e.g. ${f.key}: ${text}`;
    });
}
