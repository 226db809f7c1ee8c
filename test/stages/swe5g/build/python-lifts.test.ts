/**
 * The lifted pins of the era, host side (issue 31, python-lifts.ts): the env recipe runs the era
 * install script only with `max_lifts` (its text names the image), the report read back, and a
 * failed build's verdict named as `image_build_failed` with the package.
 */
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { envRecipe } from '../../../../pipeline/providers/docker/recipes.js';
import {
  PY_ERA_SCRIPT_FILE,
  PY_LIFTS_REPORT,
} from '../../../../pipeline/providers/docker/python-recipe.js';
import { TelebenchError } from '../../../../pipeline/errors.js';
import { pythonEnvSpec } from '../../../../stages/swe5g/build/python-env.js';
import {
  namedPythonEnvFailure,
  pythonEnvFailure,
  readLiftsReport,
} from '../../../../stages/swe5g/build/python-lifts.js';

const PY = {
  requirements: ['setup.py'],
  overrides: [{ name: 'grpcio', use: 'grpcio==1.49.1', reason: 'r' }],
  roots: [],
};
const recipe = (maxLifts: number) =>
  envRecipe(
    't',
    'python',
    't-base:x',
    { 'requirements.txt': 'pystemd==0.5.0\n' },
    {
      python: pythonEnvSpec(PY, '2020-01-21T18:32:00Z', 'uv==0.13.9', maxLifts),
    },
  );

describe('the env recipe with lifts', () => {
  it('runs the era script with the date, the exempt pins and the bound', () => {
    const r = recipe(10);
    expect(r.inline['py_era_install.py']).toBe(readFileSync(PY_ERA_SCRIPT_FILE, 'utf8'));
    expect(r.dockerfile).toContain('COPY py_era_install.py /usr/local/lib/telebench/');
    expect(r.dockerfile).toMatch(
      /--exclude-newer '2020-01-21T18:32:00Z' --exempt 'grpcio' --max-lifts 10 --report \/etc\/telebench\/python-lifts\.json/,
    );
    expect(r.dockerfile).toContain(PY_LIFTS_REPORT);
    // max_lifts 0: one uv install, the recipe (and the image name) as before the lifts
    const before = recipe(0);
    expect(before.inline['py_era_install.py']).toBeUndefined();
    expect(before.dockerfile).toContain(
      "uv pip install --system --break-system-packages --python python3 --exclude-newer '2020-01-21T18:32:00Z' --exclude-newer-package 'grpcio=false' -r /tmp/requirements.txt",
    );
    expect(before.name).not.toBe(r.name);
    expect(recipe(3).name).not.toBe(r.name);
  });
});

describe('the report and the verdict', () => {
  it('reads the report; an image without one has none', () => {
    const lift = {
      package: 'pystemd',
      date_version: '0.5.0',
      version: '0.7.0',
      tried: ['0.6.0'],
      error: "AttributeError: module '_ast' has no attribute 'Str'",
      kind: 'build',
    };
    expect(readLiftsReport(JSON.stringify({ python: 'Python 3.9.2', lifts: [lift] }))).toEqual([
      lift,
    ]);
    expect(readLiftsReport('')).toEqual([]);
    expect(readLiftsReport('not json')).toEqual([]);
  });

  it("names the package of a failed env build from the script's last line", () => {
    const line =
      "telebench: python package pystemd: 0.5.0 (the era's) does not install on Python 3.9.2, nor any later release (tried 0.6.0): AttributeError: module '_ast' has no attribute 'Str'";
    const log = `docker build of t-env:1 failed: ${line}\nERROR: The command '/bin/sh -c ...' returned a non-zero code: 1`;
    expect(pythonEnvFailure(log)).toEqual({ package: 'pystemd', line });
    expect(
      pythonEnvFailure(
        "telebench: the era's requirements do not install, and no package is to blame: x",
      ),
    ).toEqual({
      line: "telebench: the era's requirements do not install, and no package is to blame: x",
    });
    expect(pythonEnvFailure('E: Unable to locate package libfoo')).toBeUndefined();
    const err = new TelebenchError('image_build_failed', log, {
      tier: 'infra',
      context: { image: 't-env:1', contextDir: '/tmp/c' },
    });
    const named = namedPythonEnvFailure(err, 't-env:1') as TelebenchError;
    expect(named.code).toBe('image_build_failed');
    expect(named.tier).toBe('infra');
    expect(named.message).toMatch(
      /^env layer t-env:1: python package pystemd: 0\.5\.0 \(the era's\)/,
    );
    expect(named.context).toMatchObject({ image: 't-env:1', package: 'pystemd' });
    const other = new Error('no space left on device');
    expect(namedPythonEnvFailure(other, 't-env:1')).toBe(other);
  });
});
