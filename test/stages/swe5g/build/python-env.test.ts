/**
 * The Python environment of a registry entry (`environment.python`, docs/environments.md):
 * requirements read from `setup.py` / requirements files and overridden on the host, and the
 * recipe text they make (env layer: pip, grpcio-tools apart, the roots' `.pth`; instance layer:
 * protoc at the base commit). A Python entry without the block keeps its recipes byte for byte.
 */
import { describe, it, expect } from 'vitest';
import {
  installRequiresOf,
  mergeRequirements,
  normalizedName,
  requirementName,
  requirementsFileLines,
} from '../../../../stages/swe5g/build/python-env.js';
import {
  envRecipe,
  instanceRecipe,
  pythonProtocCommand,
  PY_GEN_DIR,
  PY_PROTOC_DIR,
} from '../../../../pipeline/providers/docker/recipes.js';
import { TelebenchError } from '../../../../pipeline/errors.js';
import { registryEntrySchema } from '../../../../stages/swe5g/registry.js';

const SETUP = `from setuptools import setup

setup(
    name='orc8r',
    install_requires=[
        'setuptools==49.6.0',
        "grpcio>=1.46.3,<1.49.0",
        'redis==3.5.3',  # redis-py (Python bindings to redis)
        # pin recursive dependencies
        'aioeventlet @ git+https://github.com/magma/deb-python-aioeventlet@8613',
        'Jinja2==2.11.3',
    ],
    extras_require={'dev': ['pytest==7.1.2']},
)
`;

describe('requirements of a setup.py, read as text', () => {
  it('takes install_requires only, comments and quotes of both kinds', () => {
    expect(installRequiresOf(SETUP, 'setup.py@abc')).toEqual([
      'setuptools==49.6.0',
      'grpcio>=1.46.3,<1.49.0',
      'redis==3.5.3',
      'aioeventlet @ git+https://github.com/magma/deb-python-aioeventlet@8613',
      'Jinja2==2.11.3',
    ]);
    expect(installRequiresOf("setup(name='x')\n", 'setup.py@abc')).toEqual([]);
  });

  it('a list that is not literal is an error naming the file and line', () => {
    const text = "REQS = ['a']\nsetup(\n    install_requires=REQS + ['b'],\n)\n";
    let err: unknown;
    try {
      installRequiresOf(text, 'lte/setup.py@0123456789ab');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TelebenchError);
    expect((err as TelebenchError).code).toBe('python_requirements_unreadable');
    expect((err as TelebenchError).tier).toBe('content');
    expect((err as Error).message).toContain('lte/setup.py@0123456789ab');
    expect((err as Error).message).toContain('line 3');
    // a call inside the list is no literal either
    expect(() => installRequiresOf("setup(install_requires=['a', f()])", 's')).toThrow(
      /not a list of string literals/,
    );
  });

  it('names and requirements files', () => {
    expect(requirementName('Jinja2==2.11.3')).toBe('Jinja2');
    expect(requirementName('fakeredis[lua]==1.8.1')).toBe('fakeredis');
    expect(requirementName('aioeventlet @ git+https://x')).toBe('aioeventlet');
    expect(normalizedName('Python_Redis.Lock')).toBe('python-redis-lock');
    expect(requirementsFileLines('# c\n-r base.txt\nsix>=1.16  # why\n\nidna==3.3\n')).toEqual([
      'six>=1.16',
      'idna==3.3',
    ]);
  });
});

describe('merging with overrides', () => {
  it('replaces, leaves out and dedupes, in file order, and says what it changed', () => {
    const r = mergeRequirements(
      [
        { path: 'orc8r/gateway/python/setup.py', text: SETUP },
        { path: 'lte/requirements.txt', text: 'redis==3.5.3\nsix>=1.16.0\n' },
      ],
      [
        { name: 'GRPCIO', use: 'grpcio==1.49.1', reason: 'no cp311 wheel below 1.49' },
        { name: 'aioeventlet', reason: 'a git URL' },
        { name: 'setuptools', reason: 'would downgrade the image setuptools' },
        // the same line at this commit: installed, not reported as changed
        { name: 'redis', use: 'redis==3.5.3', reason: 'an older pin elsewhere' },
      ],
      '0123456789abcdef',
    );
    expect(r.text).toBe('grpcio==1.49.1\nredis==3.5.3\nJinja2==2.11.3\nsix>=1.16.0\n');
    expect(r.applied).toEqual([
      { from: 'setuptools==49.6.0', to: null, reason: 'would downgrade the image setuptools' },
      { from: 'grpcio>=1.46.3,<1.49.0', to: 'grpcio==1.49.1', reason: 'no cp311 wheel below 1.49' },
      {
        from: 'aioeventlet @ git+https://github.com/magma/deb-python-aioeventlet@8613',
        to: null,
        reason: 'a git URL',
      },
    ]);
  });
});

const CA = '/nonexistent/ca.crt';

describe('Python recipes', () => {
  it('without environment.python the env and instance recipes are as before', () => {
    const env = envRecipe('tb', 'python', 'tb-base:1', { 'requirements.txt': 'six\n' });
    expect(env.dockerfile).toBe(
      'FROM tb-base:1\nWORKDIR /testbed\nCOPY requirements.txt /tmp/requirements.txt\nRUN python3 -m pip install --break-system-packages -r /tmp/requirements.txt\n',
    );
    const inst = instanceRecipe('tb', 'python', env.name, '/src', 'r@c');
    expect(inst.dockerfile).toBe(`FROM ${env.name}\nCOPY testbed/ /testbed/\nWORKDIR /testbed\n`);
  });

  it('with it: pip with the host CA, grpcio-tools apart, the roots and generated code on the path', () => {
    const py = {
      roots: ['lte/gateway/python', 'orc8r/gateway/python'],
      protocTool: 'grpcio-tools==1.49.1',
    };
    const pyEnv = (deps: Record<string, string>, caBundle: string) =>
      envRecipe('tb', 'python', 'tb-base:1', deps, { python: { ...py, caBundle } });
    const env = pyEnv({ 'requirements.txt': 'six\n' }, CA);
    expect(env.inline['requirements.txt']).toBe('six\n');
    expect(env.copies['host-ca.crt']).toBe(CA);
    expect(env.dockerfile).toContain(
      'RUN PIP_CERT=/tmp/telebench-ca.crt PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --no-cache-dir -r /tmp/requirements.txt',
    );
    expect(env.dockerfile).toContain(`--target ${PY_PROTOC_DIR} 'grpcio-tools==1.49.1'`);
    expect(env.dockerfile).toContain(
      `printf '%s\\n' '/testbed/lte/gateway/python' '/testbed/orc8r/gateway/python' '${PY_GEN_DIR}' > "$d/telebench-roots.pth"`,
    );
    // the CA bundle's path names no image: the same recipe on a machine without one differs
    // only by the COPY, and requirements name it
    const other = pyEnv({ 'requirements.txt': 'six\n' }, '/elsewhere/ca.crt');
    expect(other.name).toBe(env.name);
    const moreReqs = pyEnv({ 'requirements.txt': 'six\nidna\n' }, CA);
    expect(moreReqs.name).not.toBe(env.name);
  });

  it('the instance layer compiles the base commit protos, in path order, outside /testbed', () => {
    const protos = { dirs: ['lte/protos', 'orc8r/protos'], include: ['orc8r/protos/prometheus'] };
    const inst = instanceRecipe(
      'tb',
      'python',
      'tb-env:1',
      '/src',
      'r@c',
      'lte/gateway/python/magma/policydb',
      undefined,
      protos,
    );
    expect(inst.dockerfile).toBe(
      `FROM tb-env:1\nCOPY testbed/ /testbed/\nWORKDIR /testbed\nRUN ${pythonProtocCommand(protos)}\n`,
    );
    const cmd = pythonProtocCommand(protos);
    expect(cmd).toContain(`for d in 'lte/protos' 'orc8r/protos'; do`);
    expect(cmd).toContain('LC_ALL=C sort');
    expect(cmd).toContain(
      `PYTHONPATH=${PY_PROTOC_DIR} xargs -r python3 -m grpc_tools.protoc -I'orc8r/protos/prometheus' -I'.' --python_out=${PY_GEN_DIR} --grpc_python_out=${PY_GEN_DIR}`,
    );
    expect(inst.name).not.toBe(instanceRecipe('tb', 'python', 'tb-env:1', '/src', 'r@c').name);
  });
});

describe('registry schema of environment.python', () => {
  const entry = (python: unknown): unknown => ({
    id: 'o/n:a/b',
    owner: 'o',
    name: 'n',
    path: 'a/b',
    language: 'python',
    nf: 'library',
    issues_repo: 'o/n',
    license: 'MIT',
    test: { command: 'python -m pytest -q' },
    image: 'python',
    environment: { python },
  });

  it('takes requirements, overrides, protos and roots with defaults', () => {
    const e = registryEntrySchema.parse(
      entry({
        requirements: ['a/setup.py'],
        overrides: [{ name: 'grpcio', use: 'grpcio==1.49.1', reason: 'wheel' }],
        protos: { dirs: ['a/protos'] },
        roots: ['a'],
      }),
    );
    expect(e.environment?.python?.protos).toEqual({
      dirs: ['a/protos'],
      include: [],
      tool: 'grpcio-tools==1.49.1',
    });
  });

  it('rejects a path outside the repository and an override without a reason', () => {
    expect(registryEntrySchema.safeParse(entry({ roots: ['../x'] })).success).toBe(false);
    expect(registryEntrySchema.safeParse(entry({ roots: ['/abs'] })).success).toBe(false);
    expect(
      registryEntrySchema.safeParse(entry({ overrides: [{ name: 'grpcio', use: 'grpcio==1' }] }))
        .success,
    ).toBe(false);
  });
});
