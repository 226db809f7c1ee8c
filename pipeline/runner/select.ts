/** Which stages a run executes, in an order where every stage comes after its needs. */
import type { Pipeline, Stage } from '../stage.js';
import { ConfigError } from '../errors.js';

export type StageRegistry = ReadonlyMap<string, Stage<any, any, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Selects the stages to run and sorts them so that every stage comes after its needs (depth-first
 * over the pipeline's stages, stable by declaration order). `only` keeps one stage (its needs are
 * read from the store as they are); `from` keeps a stage and every stage depending on it.
 * @throws ConfigError when a stage name is unknown, a need is missing from the registry, or the
 *   needs form a cycle
 */
export function selectStages(
  pipeline: Pipeline<unknown>,
  registry: StageRegistry,
  opts: { only?: string; from?: string } = {},
): string[] {
  for (const name of pipeline.stages) {
    if (!registry.has(name))
      throw new ConfigError(`pipeline "${pipeline.name}" names unknown stage "${name}"`);
  }
  const inPipeline = new Set(pipeline.stages);
  const order: string[] = [];
  const visiting = new Set<string>();
  const visited = new Set<string>();
  const visit = (name: string, trail: string[]): void => {
    if (visited.has(name)) return;
    if (visiting.has(name))
      throw new ConfigError(`stage needs form a cycle: ${[...trail, name].join(' -> ')}`);
    visiting.add(name);
    const stage = registry.get(name);
    if (!stage) throw new ConfigError(`stage "${trail.at(-1)}" needs unknown stage "${name}"`);
    for (const need of stage.needs) if (inPipeline.has(need)) visit(need, [...trail, name]);
    visiting.delete(name);
    visited.add(name);
    order.push(name);
  };
  for (const name of pipeline.stages) visit(name, []);

  for (const flag of [opts.only, opts.from]) {
    if (flag !== undefined && !inPipeline.has(flag)) {
      throw new ConfigError(
        `stage "${flag}" is not part of pipeline "${pipeline.name}" (its stages: ${pipeline.stages.join(', ')})`,
      );
    }
  }
  if (opts.only) return [opts.only];
  if (opts.from) {
    const keep = new Set([opts.from]);
    for (const name of order) {
      if (registry.get(name)!.needs.some((n) => keep.has(n))) keep.add(name);
    }
    return order.filter((n) => keep.has(n));
  }
  return order;
}
