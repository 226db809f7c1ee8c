/**
 * What one `swe5g.build` record says about the instance's environment (the base and env layers:
 * toolchain and dependencies at the environment commit), as opposed to its instance layer (the
 * tree at `base_commit`) or the run (disk budget, Docker engine, swarm). Read by the report of
 * environments per project and year (`stages/swe5g/report-environments.ts`). Pure.
 *
 * The record decides, most specific first:
 * 1. the image the error names (`context.image`, e.g. `telebench-env:<hash>`): its layer;
 * 2. the layer the error names (`context.layer`, `build_context_missing`);
 * 3. the commit the error names (`context.commit`, `source_objects_missing`, a missing
 *    requirements file): the environment commit is the environment's, `base_commit` the instance's;
 * 4. the code: {@link ENVIRONMENT_CODES} are the environment's, {@link INSTANCE_CODES} the
 *    instance layer's; any other code (disk budget, engine, swarm, a bug) is not attributed to a
 *    layer and never counted as an environment failure.
 * A skipped record keeps no error context: its reason code alone decides (step 4).
 */
import type { ItemRecord } from '../../../pipeline/store/store.js';

/** Codes that say the base or env layer could not be had for this instance, with why. */
export const ENVIRONMENT_CODES: Readonly<Record<string, string>> = {
  toolchain_mismatch: "the base layer's toolchain is older than go.mod asks",
  dependency_unavailable: "a module of the env layer's go.mod cannot be downloaded",
  go_mod_download_failed: "the env layer's modules could not be downloaded on the host",
  python_requirements_missing: 'a requirements file is absent at the environment commit',
  python_requirements_unreadable: "setup.py's install_requires cannot be read",
  base_image_unavailable: 'the base image of this version cannot be pulled',
  offline_base_failed: "the rootfs of the Python era's suite could not be built",
};

/** Codes that say the instance layer (the tree at `base_commit`) failed. */
export const INSTANCE_CODES: Readonly<Record<string, string>> = {
  image_contract_failed: 'the instance image breaks the image contract',
  testbed_export_failed: "the instance image's /testbed could not be copied out",
};

/** Where a build record puts its instance. */
export type EnvOutcomeKind =
  /** `swe5g.build` done: every layer built. */
  | 'built'
  /** The base or env layer could not be had. */
  | 'env_failed'
  /** The instance layer failed (its environment may well have built). */
  | 'instance_failed'
  /** Failed or skipped for a reason the record ties to no layer (run, infrastructure, unknown). */
  | 'unattributed'
  /** No finished record yet (absent, pending, running). */
  | 'pending';

/** The outcome of one instance's environment, with the reason code when it was lost. */
export interface EnvOutcome {
  kind: EnvOutcomeKind;
  /** The skip reason or error code (`image_build_failed`), absent for built and pending. */
  reason?: string;
}

/** The layer of a telebench image name (`<prefix>-<layer>:<hash>`), or undefined. */
export function layerOfImage(image: unknown): 'base' | 'env' | 'instance' | undefined {
  if (typeof image !== 'string') return undefined;
  const m = /-(base|env|instance):[0-9a-f]+$/.exec(image);
  return m ? (m[1] as 'base' | 'env' | 'instance') : undefined;
}

const byLayer = (layer: string | undefined): EnvOutcomeKind | undefined =>
  layer === 'base' || layer === 'env'
    ? 'env_failed'
    : layer === 'instance'
      ? 'instance_failed'
      : undefined;

/** The kind of a lost record's reason code alone (step 4 of the module comment). */
export function kindOfCode(code: string): Exclude<EnvOutcomeKind, 'built' | 'pending'> {
  if (Object.hasOwn(ENVIRONMENT_CODES, code)) return 'env_failed';
  if (Object.hasOwn(INSTANCE_CODES, code)) return 'instance_failed';
  return 'unattributed';
}

/**
 * The environment outcome of a `swe5g.build` record (any state; `orphaned` counts as not
 * finished, since the latest plan no longer lists it).
 * @param rec the record, or undefined when the instance has none yet
 */
export function envOutcome(rec: ItemRecord | undefined): EnvOutcome {
  if (!rec) return { kind: 'pending' };
  if (rec.state === 'done') return { kind: 'built' };
  if (rec.state === 'skipped') {
    const reason = rec.skipReason ?? 'skipped';
    return { kind: kindOfCode(reason), reason };
  }
  if (rec.state !== 'failed') return { kind: 'pending' };
  const reason = typeof rec.error?.code === 'string' ? rec.error.code : 'unknown';
  const context = (rec.error?.context ?? {}) as Record<string, unknown>;
  const input = (rec.input ?? {}) as { base_commit?: unknown; environment_setup_commit?: unknown };
  const kind =
    byLayer(layerOfImage(context.image)) ??
    byLayer(typeof context.layer === 'string' ? context.layer : undefined) ??
    byCommit(context.commit, input) ??
    kindOfCode(reason);
  return { kind, reason };
}

/** Step 3: the commit an error names, against the instance's environment and base commits. */
function byCommit(
  commit: unknown,
  input: { base_commit?: unknown; environment_setup_commit?: unknown },
): EnvOutcomeKind | undefined {
  if (typeof commit !== 'string' || commit === '') return undefined;
  // base = environment commit: the record cannot tell the layers apart
  if (commit === input.environment_setup_commit && commit !== input.base_commit)
    return 'env_failed';
  if (commit === input.base_commit && commit !== input.environment_setup_commit)
    return 'instance_failed';
  return undefined;
}
