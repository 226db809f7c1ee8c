/**
 * A validated record of the state as the {@link EvalInstance} grading and the solver need: its
 * SWE-bench fields, image and clean tree, and the test plan its validation ran, made by the same
 * `testPlan` (stages/swe5g/test-plan.ts) from the same inputs `swe5g.validate` used (the build's
 * module folder, the gold patch, `test_patch` + the f2p test patch the steps ran, the registry
 * entry: testgen's `f2p_test_patch`, or the deferred Strategy A test validation decided to use,
 * `Validated.f2p_test_patch`), so grading runs validation's fix step. The released-row counterpart is `datasetInstance` (dataset.ts).
 */
import type { RecipeName } from '../../../pipeline/providers/docker/recipes.js';
import type { EnvironmentsSettings } from '../environments-config.js';
import type { RegistryEntry } from '../registry.js';
import { registryTestsOf, testPlan } from '../test-plan.js';
import type { Resolved } from '../types.js';
import type { ValidateInput, Validated } from '../validate/validate.js';
import type { EvalInstance } from './grade.js';

/**
 * The instance of a done `swe5g.validate` item (`inputs`: the item's input).
 * @param entry the registry entry of `inputs.resolved.registry_id` (undefined: none, as validation
 *   had none)
 * @param settings the environments settings (`test_scope`)
 */
export function stateInstance(
  v: Validated,
  inputs: ValidateInput,
  entry: RegistryEntry | undefined,
  settings: Pick<EnvironmentsSettings, 'test_scope'>,
): EvalInstance & { language: Resolved['language'] } {
  const recipe = v.image_recipe as RecipeName;
  const plan = testPlan(
    {
      recipe,
      moduleDir: inputs.built.module_dir,
      patch: v.patch,
      // the f2p test the steps ran: the deferred Strategy A when validation used it
      testPatches: [inputs.resolved.test_patch, v.f2p_test_patch ?? inputs.testgen.f2p_test_patch],
    },
    registryTestsOf(entry, v.patch),
    settings,
  );
  return {
    instance_id: v.instance_id,
    repo: v.repo,
    base_commit: v.base_commit,
    problem_statement: v.problem_statement,
    patch: v.patch,
    test_patch: v.test_patch,
    FAIL_TO_PASS: v.FAIL_TO_PASS,
    PASS_TO_PASS: v.PASS_TO_PASS,
    bug_category: v.bug_category,
    nf: v.nf,
    spec_refs: v.spec_refs,
    image: v.images.instance,
    source_dir: inputs.built.source_dir,
    language: inputs.resolved.language,
    ...plan,
  };
}
