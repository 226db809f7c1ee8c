/**
 * The repository registry of SWE-Bench 5G (`config/repos.yaml`): which repositories are mined, in
 * which language, which network function (NF) they implement, where their issues are filed, how
 * their tests run and which image recipe builds them. Adding a repository is one YAML entry.
 *
 * Source: SWE-Bench 5G paper, section "Data collection" (33 repositories: free5GC, Open5GS, Magma).
 */
import { z } from 'zod';
import { loadConfigFile } from '../../pipeline/config/load.js';
import { ConfigError } from '../../pipeline/errors.js';

const repoName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'a GitHub owner or repository name ([A-Za-z0-9_.-])');

/** One repository (or one folder of a monorepo) of the registry. */
export const registryEntrySchema = z
  .strictObject({
    /** `owner/name`, or `owner/name:path/inside` for a folder of a monorepo. */
    id: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9][A-Za-z0-9_.-]*(:[^\s:]+)?$/,
        'owner/name or owner/name:path',
      ),
    owner: repoName,
    name: repoName,
    /** Subfolder holding this entry's code (monorepos); omitted for the whole repository. */
    path: z.string().min(1).optional(),
    language: z.enum(['go', 'c', 'python']),
    default_branch: z.string().min(1).default('main'),
    /** Network function (`AMF`, `SMF`, ...) or `library`. */
    nf: z.string().regex(/^([A-Z0-9]+(-[A-Z0-9]+)*|library)$/, 'an NF name like AMF, or library'),
    /** `owner/name` where the issues are filed (free5GC: `free5gc/free5gc`). */
    issues_repo: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9][A-Za-z0-9_.-]*$/),
    license: z.enum(['Apache-2.0', 'AGPL-3.0', 'BSD-3-Clause']),
    test: z.strictObject({
      command: z.string().min(1).optional(),
      scope: z.enum(['touched', 'repo']).default('touched'),
    }),
    /** Image recipe name. */
    image: z.enum(['go', 'c-meson', 'python']),
    /** Free text: why this entry is in the registry. */
    note: z.string().optional(),
  })
  .superRefine((e, ctx) => {
    const expected = `${e.owner}/${e.name}${e.path ? `:${e.path}` : ''}`;
    if (e.id !== expected) {
      ctx.addIssue({
        code: 'custom',
        path: ['id'],
        message: `id "${e.id}" does not match owner/name${e.path ? ':path' : ''} ("${expected}")`,
      });
    }
  });
export type RegistryEntry = z.output<typeof registryEntrySchema>;

export const registrySchema = z
  .strictObject({
    version: z.literal(1),
    repositories: z.array(registryEntrySchema).min(1),
  })
  .superRefine((r, ctx) => {
    const seen = new Map<string, number>();
    r.repositories.forEach((e, i) => {
      const prev = seen.get(e.id);
      if (prev !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['repositories', i, 'id'],
          message: `duplicate id "${e.id}" (first at repositories[${prev}])`,
        });
      } else seen.set(e.id, i);
    });
  });
export type Registry = z.output<typeof registrySchema>;

/**
 * Loads and validates `config/repos.yaml`.
 * @param file path of the registry YAML
 * @returns the entries in file order
 * @throws ConfigError naming the file, the entry path (`repositories[3].nf`) and line
 */
export function loadRegistry(file: string): RegistryEntry[] {
  return loadConfigFile(file, registrySchema).repositories;
}

/**
 * Restricts the registry to `ids` (config `swe5g.repos`), keeping file order.
 * @throws ConfigError when an id is not in the registry (lists the known ids)
 */
export function selectRepos(
  entries: readonly RegistryEntry[],
  ids: readonly string[] | undefined,
  where = 'swe5g.repos',
): RegistryEntry[] {
  if (!ids || ids.length === 0) return [...entries];
  const known = new Set(entries.map((e) => e.id));
  const missing = ids.filter((id) => !known.has(id));
  if (missing.length > 0) {
    throw new ConfigError(
      `${where}: unknown repository id(s) ${missing.map((m) => `"${m}"`).join(', ')}; known: ${[...known].join(', ')}`,
      { path: where },
    );
  }
  const want = new Set(ids);
  return entries.filter((e) => want.has(e.id));
}

/** `owner/name` of the GitHub repository an entry lives in (without the `:path`). */
export function githubRepoOf(entry: RegistryEntry): string {
  return `${entry.owner}/${entry.name}`;
}
