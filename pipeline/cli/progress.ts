/**
 * Renders run events for a person or a program: on a TTY one progress bar per stage
 * (cli-progress, why: the most used Node progress-bar library, with multi-bar support, rate and
 * ETA), otherwise one JSON line per event on stdout. Every event also goes to the run's
 * `events.jsonl` (see {@link eventLogWriter}).
 */
import type CliProgress from 'cli-progress';
import { lazy } from '../lazy.js';
import { openSync, writeSync, closeSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { EventBus, StampedEvent } from '../events.js';

/** Appends every event as a JSON line to `file` (unbuffered writes: a kill loses at most the line being written). */
export function eventLogWriter(bus: EventBus, file: string): () => void {
  mkdirSync(dirname(file), { recursive: true });
  const fd = openSync(file, 'a');
  const off = bus.on((e) => writeSync(fd, `${JSON.stringify(e)}\n`));
  return () => {
    off();
    closeSync(fd);
  };
}

/**
 * What a first SIGINT/SIGTERM means, for a person: no new items start; an in-flight item either
 * finishes or, where its work honours the abort, goes back to pending (an embedded model's
 * prompt evaluation cannot be cut, so this can take minutes); a second signal exits at once.
 */
export function interruptedLine(signal: string): string {
  return `received ${signal}: starting no new items; each in-flight item finishes, or stops and runs again on resume (a model call or a container step can take minutes to finish); send it again to exit now`;
}

/** JSON-lines renderer for pipes: item-level events are left out unless `verbose`, to keep logs small. */
export function jsonLinesRenderer(
  bus: EventBus,
  out: NodeJS.WritableStream,
  verbose = false,
): () => void {
  return bus.on((e: StampedEvent) => {
    if (!verbose && (e.kind === 'item-start' || (e.kind === 'item-end' && e.state === 'done')))
      return;
    out.write(`${JSON.stringify(e)}\n`);
  });
}

/**
 * Says, while it lasts, that a stage is waiting: every `everyMs` (default 30 s), for each stage
 * whose oldest in-flight item started at least `everyMs` ago, emits a `log` event on `bus`
 * (`waiting: 4 items in flight, the longest for 95 s`), so a hung model server or a slow Docker
 * build is visible on the TTY, in the JSON lines and in events.jsonl instead of silent minutes.
 * Retries and their reasons arrive as `retry` / `rate-limit` events from the providers.
 * @returns a function that stops the timer
 */
export function waitingReporter(bus: EventBus, everyMs = 30_000): () => void {
  const inFlight = new Map<string, Map<string, number>>();
  const off = bus.on((e) => {
    if (e.kind === 'item-start') {
      const m = inFlight.get(e.stage) ?? new Map<string, number>();
      m.set(e.key, Date.now());
      inFlight.set(e.stage, m);
    } else if (e.kind === 'item-end') {
      inFlight.get(e.stage)?.delete(e.key);
    }
  });
  const timer = setInterval(() => {
    const now = Date.now();
    for (const [stage, items] of inFlight) {
      if (items.size === 0) continue;
      const longest = now - Math.min(...items.values());
      if (longest < everyMs) continue;
      bus.emit({
        kind: 'log',
        stage,
        message: `waiting: ${items.size} item${items.size === 1 ? '' : 's'} in flight, the longest for ${Math.round(longest / 1000)} s`,
        data: { waiting: true, in_flight: items.size, longest_s: Math.round(longest / 1000) },
      });
    }
  }, everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    off();
  };
}

/** Progress bars on a TTY: one bar per stage with done/total, rate and ETA; logs print above. */
export function ttyRenderer(bus: EventBus): () => void {
  const cliProgress = lazy<typeof CliProgress>('cli-progress')();
  const multi = new cliProgress.MultiBar(
    {
      format: ' {stage} [{bar}] {value}/{total} | {rate}/s | ETA {eta_formatted} | {note}',
      hideCursor: true,
      clearOnComplete: false,
      stopOnComplete: false,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<
    string,
    {
      bar: CliProgress.SingleBar;
      start: number;
      done: number;
      already: number;
      failed: number;
      skipped: number;
    }
  >();
  const pad = (s: string): string => s.padEnd(22);
  const off = bus.on((e) => {
    switch (e.kind) {
      case 'stage-start': {
        const bar = multi.create(Math.max(e.total, 1), e.alreadyDone, {
          stage: pad(e.stage),
          rate: '0',
          note: '',
        });
        bars.set(e.stage, {
          bar,
          start: Date.now(),
          done: e.alreadyDone,
          already: e.alreadyDone,
          failed: 0,
          skipped: 0,
        });
        break;
      }
      case 'stage-total': {
        const b = bars.get(e.stage);
        if (!b) break;
        // items found already finished by a later pass count as done
        b.done += e.alreadyDone - b.already;
        b.already = e.alreadyDone;
        b.bar.setTotal(Math.max(e.total, 1));
        b.bar.update(b.done);
        break;
      }
      case 'item-end': {
        const b = bars.get(e.stage);
        if (!b || e.state === 'abandoned') break;
        b.done++;
        if (e.state === 'failed') b.failed++;
        if (e.state === 'skipped') b.skipped++;
        const rate = ((b.done * 1000) / Math.max(1, Date.now() - b.start)).toFixed(1);
        b.bar.update(b.done, { rate, note: `${b.failed} failed, ${b.skipped} skipped` });
        break;
      }
      case 'stage-preflight-failed':
        multi.log(`stage ${e.stage} stopped at preflight: ${e.message}\n  -> ${e.hint}\n`);
        break;
      case 'stage-blocked':
        multi.log(`stage ${e.stage} not started: ${e.because}\n`);
        break;
      case 'rate-limit':
        multi.log(`${e.service}: rate limited, waiting ${e.waitSeconds}s (${e.reason})\n`);
        break;
      case 'retry':
        multi.log(
          `${e.service}: attempt ${e.attempt} failed (${e.reason}); retrying in ${e.waitSeconds}s\n`,
        );
        break;
      case 'log':
        multi.log(`${e.stage ? `[${e.stage}] ` : ''}${e.message}\n`);
        break;
      case 'interrupted':
        multi.log(`${interruptedLine(e.signal)}\n`);
        break;
      default:
        break;
    }
  });
  return () => {
    off();
    multi.stop();
  };
}
