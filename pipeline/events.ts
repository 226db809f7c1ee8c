/**
 * The typed event stream of a run. Every event is written as one JSON line to
 * `<state>/runs/<run_id>/events.jsonl`; on a TTY the CLI also draws progress bars from them, in a
 * pipe it prints the JSON lines.
 */
export type TelebenchEvent =
  | { kind: 'run-start'; runId: string; pipeline: string; stages: string[] }
  | {
      kind: 'stage-start';
      stage: string;
      total: number;
      /**
       * Items found done or skipped by earlier runs, among those decided so far. A streaming
       * stage decides an item only once the items it names upstream have settled in this run, so
       * on a resume this can start at 0; its `stage-total` events carry the growing count.
       */
      alreadyDone: number;
      /** Set when the stage streams: `total` grows as its needs finish items (`stage-total`). */
      streaming?: boolean;
    }
  /** A streaming stage listed more items: the new `total` (all listed so far). */
  | { kind: 'stage-total'; stage: string; total: number; alreadyDone: number }
  | {
      kind: 'stage-preflight-failed';
      stage: string;
      service: string;
      message: string;
      hint: string;
    }
  | { kind: 'stage-blocked'; stage: string; because: string; root?: string }
  | { kind: 'item-start'; stage: string; key: string; attempt: string }
  | {
      kind: 'item-end';
      stage: string;
      key: string;
      attempt: string;
      state: 'done' | 'failed' | 'skipped' | 'abandoned';
      reason?: string;
      ms: number;
    }
  | {
      kind: 'stage-end';
      stage: string;
      /**
       * Items by state in the store after the stage (`done`, `failed`, ..., `total`); in a dry run
       * the plan's decisions instead (`planned`, `run` = would run, `done`, `skipped`, ...).
       */
      counts: Record<string, number>;
      /** Items this run started in the stage (absent in a dry run: nothing runs). */
      ran?: number;
      /** Set when the stage did not run: it stopped at preflight (then `ran` is 0). */
      stopped?: { at: 'preflight'; service: string; reason: string; hint?: string };
      ms: number;
    }
  | {
      kind: 'rate-limit';
      service: string;
      waitSeconds: number;
      reason: string;
    }
  | { kind: 'retry'; service: string; attempt: number; waitSeconds: number; reason: string }
  | { kind: 'log'; stage?: string; key?: string; message: string; data?: Record<string, unknown> }
  | { kind: 'interrupted'; signal: string }
  | { kind: 'run-end'; runId: string; exitCode: number; ms: number };

/** Adds the wall-clock timestamp (ISO 8601) under `at`. */
export type StampedEvent = TelebenchEvent & { at: string };

export type EventListener = (event: StampedEvent) => void;

/** Fan-out of events to listeners (event log file, progress bars, JSON lines). */
export class EventBus {
  private readonly listeners: EventListener[] = [];

  /** Registers a listener; returns a function that removes it. */
  on(listener: EventListener): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** Stamps the event and delivers it to every listener, in registration order. */
  emit(event: TelebenchEvent): void {
    const stamped = { ...event, at: new Date().toISOString() } as StampedEvent;
    for (const l of this.listeners) l(stamped);
  }
}
