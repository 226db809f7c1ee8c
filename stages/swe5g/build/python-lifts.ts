/**
 * The pins of the era a Python env layer lifted (issue 31; docs/environments.md, "A pin of the
 * era that does not install"), host side: the env layer's install script
 * (`pipeline/providers/docker/py_era_install.py`) replaces a package of the era's pins that does
 * not build or install on the era's Python with its oldest later release that does, and writes
 * what it did to {@link PY_LIFTS_REPORT}; {@link pythonLiftsInImage} reads that report back for
 * the build record (`python_env.lifts`), as the Go import check's is read back
 * (`go-imports.ts`). {@link pythonEnvFailure} names the package of an env build that failed.
 */
import { TelebenchError } from '../../../pipeline/errors.js';
import { PY_LIFTS_REPORT } from '../../../pipeline/providers/docker/python-recipe.js';
import { DockerExecutor } from '../../../pipeline/providers/docker/executor.js';
import type { DockerClient } from '../../../pipeline/providers/docker/client.js';
import type { KeyValue } from '../../../pipeline/store/store.js';

/** One pin the env layer did not take at the era's date (Built `python_env.lifts`). */
export interface PythonLift {
  /** The project name (`pystemd`; a build dependency such as `setuptools`). */
  package: string;
  /** The version the era's date gave (`0.5.0`). */
  date_version: string;
  /** The version taken instead: the oldest later release that installs (`0.7.0`). */
  version: string;
  /** Releases between the two that failed too, oldest first. */
  tried: string[];
  /** The line of the failure at `date_version` that says why (`AttributeError: ...`). */
  error: string;
  /**
   * `build`: its sdist's setup.py or build failed; `no_wheel`: no wheel for this Python and no
   * sdist; `build_dependency`: the build of `for` failed inside this package, a build
   * dependency (the date's setuptools does not import on Python 3.9), which is then constrained.
   */
  kind: 'build' | 'no_wheel' | 'build_dependency';
  /** `build_dependency` only: the builds that needed it (`ryu==4.13`). */
  for?: string[];
}

/** The report {@link PY_LIFTS_REPORT} holds. */
interface LiftsReport {
  python?: string;
  lifts?: PythonLift[];
}

/**
 * Reads the lifts out of a report's text.
 * @returns the lifts, [] when the text is empty (an image built without the script) or not
 *   a report
 */
export function readLiftsReport(text: string): PythonLift[] {
  if (!text.trim()) return [];
  try {
    const r = JSON.parse(text) as LiftsReport;
    return Array.isArray(r.lifts) ? r.lifts : [];
  } catch {
    return [];
  }
}

/**
 * The lifts of a Python env image ({@link PY_LIFTS_REPORT} read in a container of `image`),
 * once per image id (kv `swe5g.python_lifts`). An image without the report (built before the
 * lifts, or with `max_lifts: 0`) reads as none.
 * @throws TelebenchError from the Docker engine (`docker_*`, infra)
 */
export async function pythonLiftsInImage(
  docker: DockerClient,
  image: string,
  kv?: KeyValue,
): Promise<PythonLift[]> {
  const id = (await docker.inspect(image))?.Id ?? image;
  const cached = kv?.get<PythonLift[]>('swe5g.python_lifts', id);
  if (cached) return cached;
  const r = await new DockerExecutor(docker).run({
    step: 'python-lifts',
    instance: { image, workdir: '/', sourceDir: '' },
    files: {},
    command: `cat ${PY_LIFTS_REPORT} 2>/dev/null || true`,
    collect: [],
    limits: { memory: 256 * 2 ** 20, cpus: 1, pids: 64, timeoutMs: 60_000 },
  });
  const lifts = readLiftsReport(r.stdout);
  kv?.set('swe5g.python_lifts', id, lifts);
  return lifts;
}

/** What {@link pythonEnvFailure} reads out of a failed env build's log. */
export interface PythonEnvFailure {
  /** The package no release of which installs, or that was one too many to lift. */
  package?: string;
  /** The script's last `telebench:` line (why). */
  line: string;
}

/**
 * The era install script's verdict in a failed env build's message (its last `telebench:`
 * line, anywhere in a line of the log's tail): `telebench: python package <name>: ...` names the package (none of its later releases
 * installs, or the lifts were used up); `telebench: the era's requirements ...` names none.
 * @returns undefined when the message holds no such line (another step of the layer failed)
 */
export function pythonEnvFailure(message: string): PythonEnvFailure | undefined {
  const lines = message.match(/telebench: (?:python package |the era's requirements )[^\n]*/g);
  const line = lines?.[lines.length - 1]?.trim();
  if (!line) return undefined;
  const pkg = /^telebench: python package ([A-Za-z0-9][A-Za-z0-9._-]*):/.exec(line)?.[1];
  return { ...(pkg ? { package: pkg } : {}), line };
}

/**
 * A failed Python env build as the build stage throws it: `err` again when its message holds no
 * verdict of the era script, else `image_build_failed` (infra) whose message starts with the
 * verdict (the package and why) and whose context adds `package`.
 * @param image the env image's name (kept in the context: the report counts it as the env's)
 */
export function namedPythonEnvFailure(err: unknown, image: string): unknown {
  const message = err instanceof Error ? err.message : String(err);
  const f = pythonEnvFailure(message);
  if (!f) return err;
  const context = err instanceof TelebenchError ? err.context : {};
  return new TelebenchError(
    'image_build_failed',
    `env layer ${image}: ${f.line.replace(/^telebench: /, '')}`,
    {
      tier: 'infra',
      context: { ...context, image, ...(f.package ? { package: f.package } : {}) },
      cause: err,
    },
  );
}
