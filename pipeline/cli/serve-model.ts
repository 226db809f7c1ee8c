/**
 * `telebench serve-model`: the embedded runtime as an OpenAI-compatible endpoint
 * (pipeline/providers/llm/serve.ts). Runs until SIGINT or SIGTERM, then closes and exits 0.
 */
import type { Command } from 'commander';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import type { ModelSource } from '../providers/llm/model-source.js';

interface ServeFlags {
  name: string;
  gguf?: string;
  ollama?: string;
  host: string;
  port: string;
  concurrency: string;
  threads: string;
  contextSize: string;
  gpu: 'auto' | 'cpu';
}

function nonNegativeInt(flag: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new ConfigError(`${flag} must be an integer >= 0, got ${value}`);
  return n;
}

/**
 * Adds `serve-model` to the CLI.
 * @throws (from its action) ConfigError for bad flags (exit 2), PreflightError when the model
 *   cannot be found or loaded (exit 3)
 */
export function addServeModelCommand(program: Command): void {
  program
    .command('serve-model')
    .description(
      'serve a GGUF model from this process as an OpenAI-compatible endpoint (/v1/models, /v1/chat/completions, streaming)',
    )
    .requiredOption('--name <model>', 'the model name clients ask for (e.g. smollm2:135m)')
    .option('--gguf <file>', 'the GGUF file to serve')
    .option('--ollama <model>', 'serve this model from the local Ollama model store')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0: any free port)', '8080')
    .option('--concurrency <n>', 'sequences evaluated together (requests at once)', '2')
    .option('--threads <n>', 'CPU threads (1 holds on a busy shared machine)', '1')
    .option('--context-size <n>', 'context window per request in tokens', '4096')
    .option('--gpu <mode>', 'auto (a GPU when found) or cpu', 'auto')
    .action(async (flags: ServeFlags, cmd: Command) => {
      const sources: ModelSource[] = [];
      if (flags.gguf) sources.push({ path: flags.gguf });
      if (flags.ollama) sources.push({ ollama: { model: flags.ollama } });
      if (sources.length === 0)
        throw new ConfigError('serve-model needs --gguf <file> or --ollama <model>');
      if (flags.gpu !== 'auto' && flags.gpu !== 'cpu')
        throw new ConfigError(`--gpu must be auto or cpu, got ${flags.gpu}`);
      const contextSize = nonNegativeInt('--context-size', flags.contextSize);
      // loaded here, not at start: the CLI's other commands never pay for the model runtime
      const { resolveStateDir } = await import('../state.js');
      const { EmbeddedProvider } = await import('../providers/llm/embedded.js');
      const { startModelServer } = await import('../providers/llm/serve.js');
      const provider = new EmbeddedProvider({
        model: flags.name,
        sources,
        baseDir: process.cwd(),
        modelsDir: join(
          resolveStateDir(cmd.optsWithGlobals().state as string | undefined),
          'models',
        ),
        contextSize,
        sequences: Math.max(1, nonNegativeInt('--concurrency', flags.concurrency)),
        threads: Math.max(1, nonNegativeInt('--threads', flags.threads)),
        gpu: flags.gpu === 'cpu' ? false : 'auto',
      });
      const server = await startModelServer({
        provider,
        model: flags.name,
        contextSize,
        host: flags.host,
        port: nonNegativeInt('--port', flags.port),
      });
      const e = server.info.embedded;
      process.stdout.write(
        `serving ${flags.name} at ${server.url} (${server.info.serverVersion}; ${server.info.modelDigest}; ` +
          `${e?.model.origin ?? ''}; chat template ${e?.chatWrapper ?? ''}; ${e?.threads ?? ''} thread(s), ${e?.sequences ?? ''} sequence(s))\n`,
      );
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await server.close();
      await provider.close();
      process.exitCode = 0;
    });
}
