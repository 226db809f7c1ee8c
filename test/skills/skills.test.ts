import { describe, it, expect } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { getEncoding } from 'js-tiktoken';
import { specRefs } from '../../stages/swe5g/testgen/classify.js';

/**
 * Checks of the 3GPP specification skill documents in `skills/` (paper: "3GPP specifications as
 * skill documents" — one self-contained Markdown file per specification area, about 350 tokens,
 * ending with a key-implication paragraph).
 */

const SKILLS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'skills');

/** The ten specification areas free5GC / Open5GS bugs touch; one skill each. */
const EXPECTED_SPECS = [
  'TS 29.514',
  'TS 29.512',
  'TS 29.502',
  'TS 29.518',
  'TS 38.413',
  'TS 24.501',
  'TS 29.503',
  'TS 29.510',
  'TS 29.244',
  'TS 29.509',
];

const NF_NAMES = new Set(['AMF', 'SMF', 'UPF', 'PCF', 'UDM', 'UDR', 'AUSF', 'NRF', 'NSSF', 'NEF']);
const BODY_TOKENS_MIN = 200;
const BODY_TOKENS_MAX = 600;

interface FrontMatter {
  spec: string;
  title: string;
  release: string;
  version: string;
  nf: string[];
  keywords: string[];
  sources: string[];
}

interface Skill {
  file: string;
  front: FrontMatter;
  body: string;
}

const isStringArray = (v: unknown): v is string[] =>
  Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string' && x.trim() !== '');

/**
 * Splits a skill document into YAML front matter and Markdown body and checks the front matter.
 * @param text whole file content; @param file name used in error messages.
 * @throws Error naming the file and the missing or malformed key.
 */
function parseSkill(text: string, file: string): Skill {
  const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
  if (!m) throw new Error(`${file}: no YAML front matter delimited by '---' lines`);
  const raw: unknown = parseYaml(m[1]!);
  if (typeof raw !== 'object' || raw === null)
    throw new Error(`${file}: front matter is not a map`);
  const fm = raw as Record<string, unknown>;
  for (const key of ['spec', 'title', 'release', 'version'] as const) {
    if (typeof fm[key] !== 'string' || (fm[key] as string).trim() === '')
      throw new Error(`${file}: front matter key '${key}' must be a non-empty string`);
  }
  for (const key of ['nf', 'keywords', 'sources'] as const) {
    if (!isStringArray(fm[key]))
      throw new Error(`${file}: front matter key '${key}' must be a non-empty list of strings`);
  }
  return { file, front: fm as unknown as FrontMatter, body: m[2]! };
}

function loadSkills(): Skill[] {
  return readdirSync(SKILLS_DIR)
    .filter((f) => f.endsWith('.md') && f !== 'README.md')
    .sort()
    .map((f) => parseSkill(readFileSync(join(SKILLS_DIR, f), 'utf8'), f));
}

interface IndexEntry {
  file: string;
  spec: string;
  title?: string;
  nf: string[];
  keywords: string[];
}

function loadIndex(): IndexEntry[] {
  const doc = parseYaml(readFileSync(join(SKILLS_DIR, 'index.yaml'), 'utf8')) as {
    skills?: IndexEntry[];
  };
  if (!Array.isArray(doc?.skills)) throw new Error('skills/index.yaml: missing list "skills"');
  return doc.skills;
}

const skills = loadSkills();
const enc = getEncoding('cl100k_base');

describe('parseSkill', () => {
  it('rejects documents without front matter or with a missing key, naming the file and key', () => {
    expect(() => parseSkill('# just markdown\n', 'x.md')).toThrow(/x\.md: no YAML front matter/);
    const noSources =
      "---\nspec: 'TS 29.514'\ntitle: t\nrelease: r\nversion: v\nnf: [PCF]\nkeywords: [a]\n---\nbody\n";
    expect(() => parseSkill(noSources, 'y.md')).toThrow(/y\.md: front matter key 'sources'/);
    const emptyNf = noSources
      .replace('nf: [PCF]', 'nf: []')
      .replace('---\nbody', 'sources: [s]\n---\nbody');
    expect(() => parseSkill(emptyNf, 'z.md')).toThrow(/z\.md: front matter key 'nf'/);
  });
});

describe('skill documents', () => {
  it('cover exactly the ten specification areas, one file each', () => {
    expect(skills.map((s) => s.front.spec).sort()).toEqual([...EXPECTED_SPECS].sort());
  });

  it('name the file after the spec id and use the normalised spec form of the pipeline', () => {
    for (const s of skills) {
      const digits = s.front.spec.replace(/^TS (\d{2})\.(\d{3})$/, '$1$2');
      expect(s.file, s.file).toMatch(new RegExp(`^ts${digits}-[a-z0-9-]+\\.md$`));
      // spec_refs of instances come from specRefs(); the skill's spec must match them verbatim.
      expect(specRefs(s.front.spec), s.file).toEqual([s.front.spec]);
      expect(s.front.keywords, s.file).toContain(s.front.spec);
    }
  });

  it('list known NF names and cite at least one source per file', () => {
    for (const s of skills) {
      for (const nf of s.front.nf) expect(NF_NAMES.has(nf), `${s.file}: nf ${nf}`).toBe(true);
      expect(s.front.sources.length, s.file).toBeGreaterThan(0);
    }
  });

  it(`have a body of ${BODY_TOKENS_MIN}-${BODY_TOKENS_MAX} cl100k tokens`, () => {
    for (const s of skills) {
      const n = enc.encode(s.body).length;
      expect(n, `${s.file}: ${n} tokens`).toBeGreaterThanOrEqual(BODY_TOKENS_MIN);
      expect(n, `${s.file}: ${n} tokens`).toBeLessThanOrEqual(BODY_TOKENS_MAX);
    }
  });

  it('start with a heading naming the spec and end with a key-implication paragraph', () => {
    for (const s of skills) {
      const body = s.body.trim();
      expect(body.split('\n')[0], s.file).toMatch(
        new RegExp(`^# ${s.front.spec.replace('.', '\\.')}\\b`),
      );
      const paragraphs = body.split(/\n\s*\n/);
      expect(paragraphs.at(-1), s.file).toMatch(/^\*\*Key implication\.\*\* \S/);
    }
  });
});

describe('skills/index.yaml', () => {
  const index = loadIndex();

  it('lists every skill file once and only existing files', () => {
    const listed = index.map((e) => e.file);
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual(skills.map((s) => s.file));
  });

  it('repeats spec, nf and keywords of each file front matter', () => {
    for (const e of index) {
      const s = skills.find((x) => x.file === e.file);
      expect(s, e.file).toBeDefined();
      expect(e.spec, e.file).toBe(s!.front.spec);
      expect(e.nf, e.file).toEqual(s!.front.nf);
      expect(e.keywords, e.file).toEqual(s!.front.keywords);
    }
  });

  it('matches each spec reference of the ten areas to exactly one skill', () => {
    for (const spec of EXPECTED_SPECS) {
      const hits = index.filter((e) => e.spec === spec || e.keywords.includes(spec));
      expect(
        hits.map((h) => h.file),
        spec,
      ).toHaveLength(1);
    }
  });
});
