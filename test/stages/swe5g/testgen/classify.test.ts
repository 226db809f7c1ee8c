import { describe, it, expect } from 'vitest';
import { bugCategory, specRefs } from '../../../../stages/swe5g/testgen/classify.js';
import type { FixSite } from '../../../../stages/swe5g/testgen/patterns.js';

const site = (kind: FixSite['pattern']['kind']): FixSite => ({
  file: 'a.go',
  function: 'f',
  name: 'f',
  receiver: null,
  pattern: { kind, key: 'k', text: 'k' },
  parentCount: 0,
  fixCount: 1,
  line: 1,
  strength: 'text',
});

describe('specRefs', () => {
  it('normalises 3GPP references from issue, PR and commit text, unique and in order', () => {
    expect(
      specRefs(
        'Per 3GPP TS 29.514 the AfRoutReq is optional; see also TS 23.502 §4.3.2 and ts 23.502 clause 4.3.2.',
        'PR: follows TS29.512 and TS 38.413 section 9.3.1.1; TR 21.905',
        null,
        'commit: TS 29.514',
      ),
    ).toEqual(['TS 29.514', 'TS 23.502 §4.3.2', 'TS 29.512', 'TS 38.413 §9.3.1.1', 'TR 21.905']);
    expect(specRefs('no spec here, version 1.2.3, TS-1')).toEqual([]);
  });
});

describe('bugCategory', () => {
  it('follows the diff first, then the issue text', () => {
    expect(bugCategory('+\tif x != nil {', 'crash', [site('null_check')])).toBe('nil_pointer');
    expect(
      bugCategory('+\tmu.Lock()\n+\tdefer mu.Unlock()', 'fatal error: concurrent map writes', []),
    ).toBe('concurrency');
    expect(bugCategory('+\tdefer resp.Body.Close()', 'connections leak', [])).toBe('resource_leak');
    // a Close() added by a validation fix is not a leak fix
    expect(
      bugCategory('+\tdefer resp.Body.Close()\n+\tif len(s) < 5 {', 'reject an invalid SUPI', [
        site('length_check'),
      ]),
    ).toBe('missing_validation');
    expect(bugCategory('+\tif len(b) < 4 {', 'index out of range', [site('length_check')])).toBe(
      'missing_validation',
    );
    expect(
      bugCategory('+\tx = y + 1', 'wrong cause value sent in the response', [site('expression')]),
    ).toBe('logic');
    expect(
      bugCategory('+\tx = y', 'AMF panics: invalid memory address or nil pointer dereference', []),
    ).toBe('nil_pointer');
    expect(bugCategory('-\tx = y', '', [])).toBe('other');
  });
});
