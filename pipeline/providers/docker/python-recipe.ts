/**
 * The Python parts of the image recipes (registry `environment.python`, docs/environments.md
 * "Python"): the env layer's pip install, grpcio-tools apart from the project's packages and the
 * package roots' `.pth` file; the instance layer's protoc run over the base commit's protos.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../manifest.js';

/** Where a Python image's generated protos live (outside /testbed: `git status` stays clean). */
export const PY_GEN_DIR = '/opt/telebench/pygen';
/** Where grpcio-tools is installed, apart from the project's own packages. */
export const PY_PROTOC_DIR = '/opt/telebench/protoc';

/**
 * A Python env layer that imports a monorepo's packages (registry `environment.python`,
 * docs/environments.md "Python"): the requirements text goes in as `depFiles['requirements.txt']`.
 */
export interface PythonEnvSpec {
  /** Folders under /testbed put on the path, in order, by a `.pth` file (package roots). */
  roots: string[];
  /** grpcio-tools requirement installed into {@link PY_PROTOC_DIR}; absent: no protos. */
  protocTool?: string;
  /**
   * Host CA bundle for pip inside the build (`PIP_CERT`), for a machine whose HTTPS goes through
   * an intercepting proxy; not part of the image name.
   */
  caBundle?: string;
  /**
   * Era pins (issue 31): the requirements are installed by uv (`uv pip install --system`) with
   * `--exclude-newer <date>`, so a requirement without an upper pin resolves to what PyPI had
   * then, build dependencies of sdists (setuptools) included; `exempt` are project names taken
   * without the date (a registry override's `use` pin, chosen for this image's Python). Absent:
   * pip, newest releases (the recipe text as before). `maxLifts` > 0: the install runs through
   * {@link PY_ERA_SCRIPT_FILE}, which lifts at most that many pins of the era that do not
   * install on the image's Python and records them in {@link PY_LIFTS_REPORT}; 0 or absent: one
   * `uv pip install` (the recipe text before the lifts).
   */
  era?: { excludeNewer: string; exempt: string[]; uv: string; maxLifts?: number };
}

/** Where the env layer's install script records the pins it lifted (read back by the build). */
export const PY_LIFTS_REPORT = '/etc/telebench/python-lifts.json';

/** The era install script in this checkout (`py_era_install.py`; standard library only). */
export const PY_ERA_SCRIPT_FILE = join(
  PROJECT_ROOT,
  'pipeline',
  'providers',
  'docker',
  'py_era_install.py',
);

/** Where the env layer's build context puts the era install script. */
const PY_ERA_SCRIPT_PATH = '/usr/local/lib/telebench/py_era_install.py';

/** Where uv is installed, apart from the project's packages (only with era pins). */
export const PY_UV_DIR = '/opt/telebench/uv';

/** `s` as one single-quoted POSIX shell word. */
const shq = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The env layer lines of a {@link PythonEnvSpec}: pip install of the requirements (build
 * isolation's own pip reads `PIP_CERT` too), grpcio-tools apart in {@link PY_PROTOC_DIR}, and a
 * `.pth` file in the interpreter's first site directory (`site.getsitepackages()`, on sys.path on
 * every Debian; `sysconfig`'s purelib is not on bullseye) naming the roots and {@link PY_GEN_DIR}.
 * @param hasRequirements the layer's context holds `requirements.txt`
 * With era pins and `maxLifts`, the install is the era script's (its text goes in `inline`, so
 * a change of the script names new env images).
 * @param copies the recipe's context copies: the CA bundle is added as `host-ca.crt`
 * @param inline the recipe's inline context files: the era script is added as `py_era_install.py`
 * @returns Dockerfile lines, in order
 * @throws Error (ENOENT) when the era script is missing from the checkout
 */
export function pythonEnvLines(
  py: PythonEnvSpec,
  hasRequirements: boolean,
  copies: Record<string, string>,
  inline: Record<string, string> = {},
): string[] {
  const lines: string[] = [];
  // PEP 668's opt-out as pip's environment variable, not its flag: the pip of an older Debian
  // (bullseye's 20.3, Python 3.9) has no --break-system-packages and ignores the variable
  let pip = 'PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --no-cache-dir';
  if (py.caBundle) {
    copies['host-ca.crt'] = py.caBundle;
    lines.push('COPY host-ca.crt /tmp/telebench-ca.crt');
    pip = `PIP_CERT=/tmp/telebench-ca.crt ${pip}`;
  }
  if (hasRequirements && py.era) {
    const ca = py.caBundle ? 'SSL_CERT_FILE=/tmp/telebench-ca.crt ' : '';
    const uv = `${PY_UV_DIR}/bin/uv`;
    lines.push(
      'COPY requirements.txt /tmp/requirements.txt',
      `RUN ${pip} --target ${PY_UV_DIR} ${shq(py.era.uv)}`,
    );
    if (py.era.maxLifts) {
      // uv in rounds: a pin of the era that does not install here is lifted, and recorded
      inline['py_era_install.py'] = readFileSync(PY_ERA_SCRIPT_FILE, 'utf8');
      const exempt = py.era.exempt.map((n) => ` --exempt ${shq(n)}`).join('');
      lines.push(
        `COPY py_era_install.py ${PY_ERA_SCRIPT_PATH}`,
        `RUN ${ca}PYTHONPATH=${PY_UV_DIR} python3 ${PY_ERA_SCRIPT_PATH} --uv ${uv} --requirements /tmp/requirements.txt --exclude-newer ${shq(py.era.excludeNewer)}${exempt} --max-lifts ${py.era.maxLifts} --report ${PY_LIFTS_REPORT} && rm /tmp/requirements.txt`,
      );
    } else {
      const exempt = py.era.exempt.map((n) => ` --exclude-newer-package ${shq(`${n}=false`)}`);
      lines.push(
        `RUN ${ca}UV_NO_CACHE=1 PYTHONPATH=${PY_UV_DIR} ${uv} pip install --system --break-system-packages --python python3 --exclude-newer ${shq(py.era.excludeNewer)}${exempt.join('')} -r /tmp/requirements.txt && rm /tmp/requirements.txt`,
      );
    }
  } else if (hasRequirements)
    lines.push(
      'COPY requirements.txt /tmp/requirements.txt',
      `RUN ${pip} -r /tmp/requirements.txt && rm /tmp/requirements.txt`,
    );
  if (py.protocTool) lines.push(`RUN ${pip} --target ${PY_PROTOC_DIR} ${shq(py.protocTool)}`);
  if (py.caBundle) lines.push('RUN rm /tmp/telebench-ca.crt');
  const pth = [...py.roots.map((r) => `/testbed/${r}`), ...(py.protocTool ? [PY_GEN_DIR] : [])];
  if (pth.length > 0)
    lines.push(
      `RUN d="$(python3 -c 'import site; print(site.getsitepackages()[0])')" && mkdir -p "$d" ${PY_GEN_DIR} && printf '%s\\n' ${pth.map(shq).join(' ')} > "$d/telebench-roots.pth"`,
    );
  return lines;
}

/**
 * The instance layer's protoc run (one `RUN` argument): every `*.proto` under `dirs` (those that
 * exist at the base commit), in path order, compiled with grpcio-tools from {@link PY_PROTOC_DIR}
 * into {@link PY_GEN_DIR} with `include` and then /testbed as import roots (grpc_tools adds the
 * well-known types): a proto under an `include` folder is named relative to it. A proto that does not compile fails the build, naming it.
 */
export function pythonProtocCommand(protos: { dirs: string[]; include: string[] }): string {
  // the include folders first: protoc names a file by the first import root holding it, so a
  // proto inside one (Magma's orc8r/protos/prometheus/metrics.proto, imported as
  // "metrics.proto") is compiled once, as `metrics_pb2`, not a second time under its full path
  const includes = [...protos.include, '.'].map((d) => `-I${shq(d)}`).join(' ');
  return [
    `cd /testbed && rm -rf ${PY_GEN_DIR} && mkdir -p ${PY_GEN_DIR}`,
    `for d in ${protos.dirs.map(shq).join(' ')}; do if [ -d "$d" ]; then find "$d" -name '*.proto' -type f; fi; done | LC_ALL=C sort > /tmp/telebench-protos.lst`,
    `PYTHONPATH=${PY_PROTOC_DIR} xargs -r python3 -m grpc_tools.protoc ${includes} --python_out=${PY_GEN_DIR} --grpc_python_out=${PY_GEN_DIR} < /tmp/telebench-protos.lst`,
    'rm /tmp/telebench-protos.lst',
  ].join(' && ');
}
