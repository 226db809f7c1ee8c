/**
 * LLM provider throughput against the scripted model server (test/servers/llm-server.ts), started
 * as a separate process like a real model server. It answers every chat request after a fixed
 * delay and serves `parallel` requests at once (like OLLAMA_NUM_PARALLEL), so its capacity is
 * `endpoints * parallel / delay` requests per second; the provider pool runs with concurrency equal
 * to `parallel` per endpoint. Printed: achieved rate / capacity per setting, all measured in this
 * one run (goal > 0.9: the provider keeps the server busy).
 *
 *   npx tsx bench/llm.bench.ts [--delay-ms 200] [--requests 240]
 */
import { everyProvider } from '../pipeline/providers/llm/options.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createProvider } from '../pipeline/providers/llm/config.js';
import type { ChatRequest } from '../pipeline/providers/llm/types.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const delayMs = arg('delay-ms', 200);
const requests = arg('requests', 240);
const serverScript = fileURLToPath(new URL('../test/servers/llm-server.ts', import.meta.url));

interface Setting {
  name: string;
  endpoints: number;
  parallel: number;
  stream: boolean;
  kind: 'ollama' | 'openai-compatible';
}

const settings: Setting[] = [
  {
    name: 'ollama stream, 1 endpoint x 4',
    endpoints: 1,
    parallel: 4,
    stream: true,
    kind: 'ollama',
  },
  {
    name: 'ollama no-stream, 1 endpoint x 4',
    endpoints: 1,
    parallel: 4,
    stream: false,
    kind: 'ollama',
  },
  {
    name: 'openai stream, 1 endpoint x 4',
    endpoints: 1,
    parallel: 4,
    stream: true,
    kind: 'openai-compatible',
  },
  {
    name: 'ollama stream, 2 endpoints x 4',
    endpoints: 2,
    parallel: 4,
    stream: true,
    kind: 'ollama',
  },
];

/** Starts one server process; resolves with its URL once it prints it. */
function startServer(parallel: number): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      serverScript,
      '--port',
      '0',
      '--delay-ms',
      String(delayMs),
      '--parallel',
      String(parallel),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server process exited with ${code}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /listening on (http:\/\/\S+)/.exec(line);
      if (m) resolve({ url: m[1]!, child });
    });
  });
}

function req(text: string): ChatRequest {
  return {
    model: 'qwen3.5:2b',
    messages: [{ role: 'user', content: `${text}: which option is right? 1) a 2) b 3) c` }],
    temperature: 0,
    maxTokens: 1024,
    providerOptions: everyProvider({ think: true, numCtx: 4096 }),
  };
}

async function run(s: Setting): Promise<{ rate: number; capacity: number }> {
  const servers = await Promise.all(
    Array.from({ length: s.endpoints }, () => startServer(s.parallel)),
  );
  try {
    const provider = createProvider({
      endpoints: servers.map((srv) => ({
        kind: s.kind,
        base_url: srv.url,
        concurrency: s.parallel,
        stream: s.stream,
      })),
      cache: false,
    });
    // Warm-up: tokenizer tables, connections.
    await Promise.all(
      Array.from({ length: s.parallel * s.endpoints }, (_, i) => provider.chat(req(`warm ${i}`))),
    );
    const started = performance.now();
    await Promise.all(
      Array.from({ length: requests }, (_, i) => provider.chat(req(`question ${i}`))),
    );
    const seconds = (performance.now() - started) / 1000;
    return { rate: requests / seconds, capacity: (s.endpoints * s.parallel * 1000) / delayMs };
  } finally {
    for (const srv of servers) {
      srv.child.removeAllListeners('exit');
      srv.child.kill();
    }
  }
}

console.log(`server delay ${delayMs} ms per request, ${requests} requests per setting`);
console.log('setting'.padEnd(36), 'req/s'.padStart(8), 'capacity'.padStart(9), 'ratio'.padStart(7));
for (const s of settings) {
  const { rate, capacity } = await run(s);
  console.log(
    s.name.padEnd(36),
    rate.toFixed(1).padStart(8),
    capacity.toFixed(1).padStart(9),
    (rate / capacity).toFixed(3).padStart(7),
  );
}
