import { describe, it, expect } from 'vitest';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadRegistry, selectRepos, registryWarnings } from '../../../../stages/swe5g/registry.js';
import { ConfigError } from '../../../../pipeline/errors.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../../..');

describe('repository registry', () => {
  it('config/repos.yaml holds the 33 repositories of the paper (free5GC 20, Open5GS 1, Magma 12)', () => {
    const entries = loadRegistry(join(ROOT, 'config/repos.yaml'));
    expect(entries).toHaveLength(33);
    const count = (owner: string) => entries.filter((e) => e.owner === owner).length;
    expect([count('free5gc'), count('open5gs'), count('magma')]).toEqual([20, 1, 12]);
    const amf = entries.find((e) => e.id === 'free5gc/amf')!;
    expect(amf).toMatchObject({
      nf: 'AMF',
      issues_repo: 'free5gc/free5gc',
      language: 'go',
      image: 'go',
    });
    for (const nf of ['AMF', 'PCF', 'SMF', 'UDM', 'NRF', 'NSSF', 'AUSF'])
      expect(entries.some((e) => e.owner === 'free5gc' && e.nf === nf)).toBe(true);
    expect(
      entries.filter((e) => e.owner === 'magma').every((e) => e.path && e.id.includes(':')),
    ).toBe(true);
  });

  it('cgo is on for exactly the Magma Go folders whose go.mod requires mattn/go-sqlite3', () => {
    const entries = loadRegistry(join(ROOT, 'config/repos.yaml'));
    const cgo = entries.filter((e) => e.environment?.cgo).map((e) => e.path);
    // checked against each folder's go.mod at the mirror's master (docs/results/magma.md)
    expect(cgo).toEqual(['feg/gateway', 'cwf/gateway', 'lte/cloud/go', 'orc8r/cloud/go']);
    expect(entries.filter((e) => e.environment?.cgo).every((e) => e.image === 'go')).toBe(true);
  });

  it('names the entry, field and line of a mistake', () => {
    const dir = mkdtempSync(join(tmpdir(), 'telebench-reg-'));
    const file = join(dir, 'repos.yaml');
    writeFileSync(
      file,
      `version: 1
repositories:
  - id: free5gc/amf
    owner: free5gc
    name: amf
    language: rust
    nf: AMF
    issues_repo: free5gc/free5gc
    license: Apache-2.0
    test: { scope: touched }
    image: go
`,
    );
    try {
      expect(() => loadRegistry(file)).toThrow(ConfigError);
      expect(() => loadRegistry(file)).toThrow(/repos\.yaml:6: repositories\[0\]\.language/);
      writeFileSync(
        file,
        `version: 1
repositories:
  - { id: free5gc/smf, owner: free5gc, name: amf, language: go, nf: AMF, issues_repo: free5gc/free5gc, license: Apache-2.0, test: { scope: touched }, image: go }
`,
      );
      expect(() => loadRegistry(file)).toThrow(/does not match owner\/name/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads the environment keys and names a bad package or an exclusion without suite or test', () => {
    const o5gs = loadRegistry(join(ROOT, 'config', 'repos.yaml')).find(
      (e) => e.id === 'open5gs/open5gs',
    )!;
    expect(o5gs.environment?.compilers).toEqual(['gcc', 'g++']);
    expect(o5gs.environment?.packages).toContain('libmongoc-dev');
    expect(o5gs.environment?.suites).toEqual(['unit']);
    // the `unit` suite proper runs (built once in the env image: a regression elsewhere is seen)
    expect(o5gs.environment?.excluded.map((e) => e.suite ?? e.test)).toEqual(['app', '5gc', 'epc']);
    const dir = mkdtempSync(join(tmpdir(), 'telebench-reg-'));
    const file = join(dir, 'repos.yaml');
    const entry = (env: string): string =>
      `version: 1\nrepositories:\n  - { id: a/b, owner: a, name: b, language: c, nf: AMF, issues_repo: a/b, license: MIT, test: { scope: repo }, image: c-meson, environment: ${env} }\n`;
    try {
      writeFileSync(file, entry('{ packages: [LibFoo_Dev] }'));
      expect(() => loadRegistry(file)).toThrow(
        /repositories\[0\]\.environment\.packages\[0\].*Debian package name/,
      );
      writeFileSync(file, entry("{ excluded: [{ suite: app, test: x, reason: 'r' }] }"));
      expect(() => loadRegistry(file)).toThrow(
        /environment\.excluded\[0\].*either a suite or a test/,
      );
      writeFileSync(file, entry("{ meson_options: ['fuzzing=true'] }"));
      expect(() => loadRegistry(file)).toThrow(/-Dname=value/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('restricts to swe5g.repos and rejects unknown ids', () => {
    const entries = loadRegistry(join(ROOT, 'config/repos.yaml'));
    expect(selectRepos(entries, ['free5gc/smf', 'free5gc/amf']).map((e) => e.id)).toEqual([
      'free5gc/amf',
      'free5gc/smf',
    ]);
    expect(() => selectRepos(entries, ['free5gc/nope'])).toThrow(
      /unknown repository id\(s\) "free5gc\/nope"/,
    );
  });

  it('accepts any SPDX id and any NF name, with a warning for what the project does not know (issue 16)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'telebench-reg-'));
    const file = join(dir, 'repos.yaml');
    const entry = (id: string, nf: string, license: string) => {
      const [owner, name] = id.split('/');
      return `  - { id: ${id}, owner: ${owner}, name: ${name}, language: go, nf: ${nf}, issues_repo: ${id}, license: ${license}, test: { scope: touched }, image: go }`;
    };
    try {
      writeFileSync(
        file,
        [
          'version: 1',
          'repositories:',
          entry('omec-project/amf', 'AMF', 'Apache-2.0'),
          entry('acme/mme', 'MME', 'MIT'),
          entry('acme/gw', 'Gateway-X', 'GPL-2.0-only'),
          entry('acme/old', 'SMF', 'GPL-2.0'),
        ].join('\n') + '\n',
      );
      // today's main rejects MIT, GPL-2.0-only and the NF name "Gateway-X"
      const entries = loadRegistry(file);
      expect(entries.map((e) => [e.nf, e.license])).toEqual([
        ['AMF', 'Apache-2.0'],
        ['MME', 'MIT'],
        ['Gateway-X', 'GPL-2.0-only'],
        ['SMF', 'GPL-2.0'],
      ]);
      const warnings = registryWarnings(entries);
      expect(warnings).toEqual([
        expect.stringMatching(
          /^repositories\[2\] acme\/gw: nf "Gateway-X" is not a known network function/,
        ),
        expect.stringMatching(
          /^repositories\[2\] acme\/gw: license "GPL-2.0-only" is not one the release table knows/,
        ),
        expect.stringMatching(
          /^repositories\[3\] acme\/old: license "GPL-2.0" .*deprecated SPDX id/,
        ),
      ]);
      // not an SPDX id at all: still an error naming the field and line
      writeFileSync(
        file,
        ['version: 1', 'repositories:', entry('acme/x', 'AMF', 'Apache2')].join('\n') + '\n',
      );
      expect(() => loadRegistry(file)).toThrow(
        /repos\.yaml:3: repositories\[0\]\.license: an SPDX license id/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // the project's own registry raises no warning
    expect(registryWarnings(loadRegistry(join(ROOT, 'config/repos.yaml')))).toEqual([]);
  });
});
