/**
 * Licences per source. Every released row carries the SPDX identifier of what it was made from;
 * the dataset card lists them (Hub front matter `license:` takes the Hub's lowercase ids).
 *
 * Sources checked:
 * - free5GC: Apache-2.0 (LICENSE of every free5gc/* repository); Open5GS: AGPL-3.0 (LICENSE of
 *   open5gs/open5gs); Magma: BSD-3-Clause (LICENSE of magma/magma). The repository registry
 *   (`config/repos.yaml`) carries the same value per entry; the registry wins when they differ.
 * - GSMA ot-lite: the Hub page of `GSMA/ot-lite` shows `License: mit` in its card metadata
 *   (looked up through the project's documentation search; no offline copy of the card exists
 *   here). The card does not restate the licences of the upstream benchmarks it packages, so each
 *   ot-lite subset is marked MIT "as redistributed by GSMA/ot-lite".
 * - ORAN-Bench-13K and srsRANBench: MIT (LICENSE file beside the data, GitHub prnshv/*).
 * - TeleResilienceBench (published instances, prnshv/TeleResilienceBench): MIT per its Hub card.
 * A source not listed here is marked `unknown` and the card says so.
 */

/** SPDX identifiers used in rows. `unknown` when no licence could be established. */
export type Spdx = 'Apache-2.0' | 'AGPL-3.0' | 'BSD-3-Clause' | 'MIT' | 'unknown';

/** Licence of a 5G core project, by GitHub owner (`free5gc`, `open5gs`, `magma`). */
export const PROJECT_LICENSES: Readonly<Record<string, Spdx>> = {
  free5gc: 'Apache-2.0',
  open5gs: 'AGPL-3.0',
  magma: 'BSD-3-Clause',
};

/** Where a subset licence comes from: the SPDX id and a sentence naming the evidence. */
export interface SourceLicense {
  spdx: Spdx;
  evidence: string;
}

const OT_LITE: SourceLicense = {
  spdx: 'MIT',
  evidence:
    'GSMA/ot-lite dataset card metadata (license: mit); upstream licences of the packaged benchmark are not restated there',
};

/**
 * Licence of a TeleResilienceBench subset by the source it was loaded from and its subset name.
 * @param source `ot-lite`, `oran-bench-13k`, `srsranbench`, `teleresiliencebench`, or a local source name
 * @param subset lowercase subset config name (`teleqna`, `3gpp_tsg`, ...)
 * @returns the licence; `unknown` with an explanation for a source this table does not know
 */
export function subsetLicense(source: string, subset: string): SourceLicense {
  const s = source.toLowerCase();
  if (s === 'ot-lite' || s === 'gsma/ot-lite') return OT_LITE;
  if (s === 'oran-bench-13k' || s === 'oranbench' || (s === 'local' && subset === 'oranbench'))
    return { spdx: 'MIT', evidence: 'ORAN-Bench-13K LICENSE (MIT), GitHub prnshv/ORAN-Bench-13K' };
  if (s === 'srsranbench' || (s === 'local' && subset === 'srsranbench'))
    return { spdx: 'MIT', evidence: 'srsRANBench LICENSE (MIT), GitHub prnshv/srsRANBench' };
  if (s === 'teleresiliencebench')
    return { spdx: 'MIT', evidence: 'TeleResilienceBench Hub card (MIT)' };
  return {
    spdx: 'unknown',
    evidence: `no licence on record for source "${source}" (subset ${subset}); check it before publishing`,
  };
}

/**
 * Licence of a 5G core repository (`free5gc/amf`) by its owner.
 * @param registryLicense the registry entry's `license` when known (it wins)
 * @returns `unknown` for an owner this table does not know and no registry value
 */
export function repositoryLicense(repo: string, registryLicense?: string): Spdx {
  if (registryLicense && isSpdx(registryLicense)) return registryLicense;
  const owner = repo.split('/')[0]?.toLowerCase() ?? '';
  return PROJECT_LICENSES[owner] ?? 'unknown';
}

/** True when `v` is one of the SPDX ids rows may carry. */
export function isSpdx(v: string): v is Spdx {
  return ['Apache-2.0', 'AGPL-3.0', 'BSD-3-Clause', 'MIT', 'unknown'].includes(v);
}

/** The Hub's licence id for an SPDX id (`Apache-2.0` -> `apache-2.0`, `unknown` -> `unknown`). */
export function hubLicenseId(spdx: string): string {
  return spdx.toLowerCase();
}
