/**
 * Reading Inspect AI evaluation logs for `telebench score`: the replies an Inspect run stored
 * (the TeleResilienceBench task in inspect/teleresiliencebench/, or any task whose sample ids are
 * TeleResilienceBench `sample_id`s) become prediction rows in our own format, so they are scored
 * in every parse mode without calling a model.
 *
 * Formats (Inspect's two log formats, `inspect log convert` turns one into the other):
 * - `.eval`: a zip archive of JSON; `header.json` (`eval.model`, `status`) and one
 *   `samples/<id>_epoch_<n>.json` per sample. Entries are stored, deflated, or Zstandard-compressed
 *   (method 93, what inspect-ai 0.3.285 writes). yauzl reads the archive (why: the central
 *   directory, names and sizes checked, not our code); fzstd decodes Zstandard (why: Node 20's
 *   zlib has no Zstandard; pure JavaScript, no native build).
 * - `.json`: one JSON object `{version, status, eval: {model}, samples: [...]}`.
 *
 * One sample -> one row: `sample_id` (the sample's `id`), `model` (`eval.model`, e.g.
 * `openai/smollm2:135m`), `content` (the text parts of `output.choices[0].message.content`, or
 * the string), `thinking` (its `reasoning` parts), `done_reason` (`length` for Inspect's
 * `max_tokens` stop reason, else the stop reason), `budget_exhausted: true` (stop reason
 * `max_tokens`: the reply was cut at the output budget, so `score` excludes it as
 * `budget_exhausted`, as the task's scorer and resilience-eval's `default` profile do),
 * `prompt_tokens` / `output_tokens` (`usage`),
 * `error` (the sample's error message: the row is excluded as a provider error). Text stored as
 * `attachment://<hash>` is read from the sample's `attachments`. A sample of a later epoch than
 * the first is refused (telebench scores one reply per `sample_id`).
 */
import { readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';
import { decompress as zstdDecompress } from 'fzstd';
import yauzl from 'yauzl';
import { TelebenchError } from '../../pipeline/errors.js';
import { jsonErrorText } from './input-text.js';
import type { RowError } from './predictions.js';

/** A prediction row read from a log, with its place (`line`: the sample's 1-based position). */
export interface LogRow {
  line: number;
  json: unknown;
}

/** Zip compression methods an Inspect log uses: stored, deflate, Zstandard. */
const STORED = 0;
const DEFLATE = 8;
const ZSTD = 93;

/**
 * True when `path` names an Inspect log: a `.eval` file, or a `.json` file whose object has
 * Inspect's `eval` and `samples` keys (a JSON Lines file of predictions is never one).
 */
export function isInspectLog(path: string): boolean {
  if (path.endsWith('.eval')) return true;
  if (!path.endsWith('.json')) return false;
  try {
    const head = readFileSync(path, 'utf8').slice(0, 1);
    if (head !== '{') return false;
    const j = parsePythonJson(readFileSync(path, 'utf8')) as Record<string, unknown>;
    return typeof j === 'object' && j !== null && 'eval' in j && 'samples' in j;
  } catch {
    return false;
  }
}

/**
 * Parses JSON as Python's `json` writes it: Inspect logs carry `NaN`, `Infinity` and `-Infinity`
 * (a metric without data), which JSON.parse refuses; outside strings they read as null.
 * @throws SyntaxError as JSON.parse
 */
export function parsePythonJson(text: string): unknown {
  return JSON.parse(
    text.replace(/"(?:[^"\\]|\\.)*"|-?\bInfinity\b|\bNaN\b/g, (m) =>
      m.startsWith('"') ? m : 'null',
    ),
  );
}

/** The entries of a zip archive, decoded, by name (in archive order). */
async function readZip(path: string): Promise<Map<string, Buffer>> {
  const zip = await yauzl.openPromise(path);
  const out = new Map<string, Buffer>();
  for await (const entry of zip.eachEntry()) {
    if (entry.fileName.endsWith('/')) continue;
    const method = entry.compressionMethod;
    if (![STORED, DEFLATE, ZSTD].includes(method))
      throw new Error(`${entry.fileName}: zip compression method ${method} is not read`);
    const stream = await zip.openReadStreamPromise(entry, { decodeFileData: false });
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    out.set(
      entry.fileName,
      method === STORED
        ? raw
        : method === DEFLATE
          ? inflateRawSync(raw)
          : Buffer.from(zstdDecompress(raw)),
    );
  }
  return out;
}

/**
 * The log's model and its samples in log order.
 * @throws Error (caught by {@link readInspectLog}) when the archive or its JSON cannot be read
 */
async function logSamples(path: string): Promise<{ model: string; samples: unknown[] }> {
  if (path.endsWith('.eval')) {
    const files = await readZip(path);
    const header = files.get('header.json') ?? files.get('_journal/start.json');
    if (!header) throw new Error('no header.json: not an Inspect .eval log');
    const h = parsePythonJson(header.toString('utf8')) as { eval?: { model?: string } };
    const samples = [...files]
      .filter(([name]) => name.startsWith('samples/') && name.endsWith('.json'))
      .map(([name, data]) => {
        try {
          return parsePythonJson(data.toString('utf8'));
        } catch (e) {
          throw new Error(`${name}: not JSON: ${jsonErrorText(e)}`);
        }
      });
    return { model: h.eval?.model ?? 'unnamed', samples };
  }
  const j = parsePythonJson(readFileSync(path, 'utf8')) as {
    eval?: { model?: string };
    samples?: unknown[] | null;
  };
  return { model: j.eval?.model ?? 'unnamed', samples: j.samples ?? [] };
}

interface InspectSample {
  id?: string | number;
  epoch?: number;
  error?: { message?: string } | string | null;
  attachments?: Record<string, string>;
  output?: {
    model?: string;
    choices?: {
      message?: { content?: string | { type?: string; text?: string; reasoning?: string }[] };
      stop_reason?: string;
    }[];
    usage?: { input_tokens?: number; output_tokens?: number } | null;
  } | null;
}

/** One Inspect sample as a prediction row of our own format (see the module comment). */
export function sampleRow(s: InspectSample, model: string): Record<string, unknown> {
  if (s.id === undefined || s.id === null || s.id === '') throw new Error('sample without an id');
  if ((s.epoch ?? 1) !== 1)
    throw new Error(
      `${s.id}: epoch ${s.epoch}: telebench scores one reply per sample_id (run inspect eval with --epochs 1)`,
    );
  const att = (t: string): string => {
    const m = /^attachment:\/\/(.+)$/.exec(t);
    return m ? (s.attachments?.[m[1]!] ?? t) : t;
  };
  const choice = s.output?.choices?.[0];
  const c = choice?.message?.content;
  const parts = typeof c === 'string' ? [{ type: 'text', text: c }] : (c ?? []);
  const content = parts.flatMap((p) => (p.type === 'text' ? [att(p.text ?? '')] : [])).join('');
  const thinking = parts
    .flatMap((p) => (p.type === 'reasoning' ? [att(p.reasoning ?? '')] : []))
    .join('\n');
  const stop = choice?.stop_reason ?? null;
  const error = typeof s.error === 'string' ? s.error : (s.error?.message ?? null);
  return {
    sample_id: String(s.id),
    model,
    content,
    thinking,
    done_reason: stop === 'max_tokens' ? 'length' : stop,
    // the task's scorer and resilience-eval's default profile exclude a reply the budget cut
    ...(stop === 'max_tokens' ? { budget_exhausted: true } : {}),
    prompt_tokens: s.output?.usage?.input_tokens ?? null,
    output_tokens: s.output?.usage?.output_tokens ?? null,
    ...(error ? { error } : {}),
  };
}

/**
 * Reads an Inspect log (`.eval` or `.json`) into prediction rows of our own format, one per
 * sample; a sample that cannot be read is a {@link RowError} (file, the sample's position as
 * `line`, why) and the others are read.
 * @throws TelebenchError `input_missing` (tier config) when the file cannot be opened or is not an
 *   Inspect log; `input_empty` (tier content) when it holds no samples
 */
export async function readInspectLog(
  path: string,
): Promise<{ rows: LogRow[]; errors: RowError[] }> {
  let log: { model: string; samples: unknown[] };
  try {
    log = await logSamples(path);
  } catch (e) {
    throw new TelebenchError(
      'input_missing',
      `cannot read Inspect log ${path}: ${(e as Error).message}`,
      { tier: 'config' },
    );
  }
  if (log.samples.length === 0)
    throw new TelebenchError('input_empty', `${path}: an Inspect log without samples`, {
      tier: 'content',
    });
  const rows: LogRow[] = [];
  const errors: RowError[] = [];
  log.samples.forEach((s, k) => {
    try {
      rows.push({ line: k + 1, json: sampleRow(s as InspectSample, log.model) });
    } catch (e) {
      errors.push({ file: path, line: k + 1, message: `sample ${k + 1}: ${(e as Error).message}` });
    }
  });
  return { rows, errors };
}
