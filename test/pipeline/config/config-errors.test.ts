import { describe, it, expect } from 'vitest';
import { allowedKeysAt, didYouMean, parseConfigText } from '../../../pipeline/config/load.js';
import { appConfigSchema } from '../../../stages/config.js';
import { ConfigError } from '../../../pipeline/errors.js';

describe('an unknown config key names the keys allowed there and the nearest one (new-user trial)', () => {
  it('allowedKeysAt walks the real schema through defaults, optionals, arrays and records', () => {
    expect(allowedKeysAt(appConfigSchema, [])).toEqual(
      expect.arrayContaining(['version', 'swe5g', 'resilience', 'resilience_eval', 'release']),
    );
    expect(allowedKeysAt(appConfigSchema, ['swe5g', 'environments'])).toEqual(
      expect.arrayContaining(['executor', 'swarm', 'limits']),
    );
    expect(allowedKeysAt(appConfigSchema, ['swe5g', 'environments'])).not.toContain('mining');
    expect(allowedKeysAt(appConfigSchema, ['swe5g', 'nowhere'])).toEqual([]);
  });

  it('didYouMean takes a typo, not an unrelated word', () => {
    expect(didYouMean('exector', ['executor', 'swarm'])).toBe('executor');
    expect(didYouMean('Mining', ['mining', 'filter'])).toBe('mining');
    expect(didYouMean('tokenz', ['base_url', 'per_page'])).toBeUndefined();
    expect(didYouMean('x', [])).toBeUndefined();
  });

  it('the error gives file, line, path, the suggestion and the allowed keys', () => {
    const yaml = 'version: 1\nswe5g:\n  environments:\n    exector: swarm\n';
    let err: unknown;
    try {
      parseConfigText(yaml, 'my.yaml', appConfigSchema);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as Error).message;
    expect(message).toMatch(
      /my\.yaml:4: swe5g\.environments\.exector: unknown key "exector" \(did you mean "executor"\?\); allowed here: .*\bexecutor\b/,
    );
    // a key whose value is a mapping: the key's own line, not its first child's
    expect(() =>
      parseConfigText(
        'version: 1\nresilence:\n  x: 1\nswe5g:\n  environments:\n    swam:\n      registry: r\n',
        'my.yaml',
        appConfigSchema,
      ),
    ).toThrow(
      /my\.yaml:6: swe5g\.environments\.swam: unknown key "swam" \(did you mean "swarm"\?\)[^]*my\.yaml:2: resilence: /,
    );
    // no guess for a key with nothing near it, and the allowed keys are still listed
    expect(() =>
      parseConfigText('version: 1\nswe5g:\n  zzzzzzzz: 1\n', 'my.yaml', appConfigSchema),
    ).toThrow(/unknown key "zzzzzzzz"; allowed here: .*\bmining\b/);
  });
});

describe('a YAML indentation mistake names its line and says what to look for (new-user trial)', () => {
  const settings = 'version: 1\nswe5g:\n  environments:\n    # the engine\n    # to use\n';
  it('a key one space too far right: its own line, not the comment above it', () => {
    expect(() =>
      parseConfigText(
        `${settings}    offline: false\n     executor: docker\n`,
        'i.yaml',
        appConfigSchema,
      ),
    ).toThrow(/^i\.yaml:6:14: invalid YAML: .*\(an indentation mistake near lines 6-7\?/);
    expect(() =>
      parseConfigText(
        `version: 1\nswe5g:\n  environments:\n    offline: false\n    # the engine\n   executor: docker\n`,
        'i.yaml',
        appConfigSchema,
      ),
    ).toThrow(
      /^i\.yaml:6:4: invalid YAML: All mapping items must start at the same column \(an indentation mistake near line 6\?/,
    );
  });
  it('a key of the enclosing mapping indented one level too far is named as such', () => {
    expect(() =>
      parseConfigText(
        'version: 1\nswe5g:\n  environments:\n    base_images:\n      go_modules: container\n',
        'i.yaml',
        appConfigSchema,
      ),
    ).toThrow(
      /i\.yaml:5: swe5g\.environments\.base_images\.go_modules: unknown key "go_modules" \("go_modules" is a key of swe5g\.environments: indented too far\?\)/,
    );
  });
  it('an unclosed { is not called an indentation mistake', () => {
    expect(() =>
      parseConfigText('version: 1\nselftest: { items: 3\n', 'i.yaml', appConfigSchema),
    ).toThrow(/^i\.yaml:\d+:\d+: invalid YAML: [^(]*\(a \{ or \[ that is not closed\?\)$/);
  });
});

describe('a wrong value names what was written and the nearest choice (new-user trial)', () => {
  it('wrong type, enum and discriminator', () => {
    const yaml = [
      'version: 1',
      'swe5g:',
      '  environments:',
      '    executor: dockr',
      '    build_concurrency: two',
      'resilience:',
      '  generator:',
      '    llm:',
      '      endpoints:',
      '        - kind: olama',
      '          model: qwen3.5:2b',
      '',
    ].join('\n');
    let message = '';
    try {
      parseConfigText(yaml, 'v.yaml', appConfigSchema);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(
      /v\.yaml:4: swe5g\.environments\.executor: .*\(got "dockr"; did you mean "docker"\?\)/,
    );
    expect(message).toMatch(/v\.yaml:5: swe5g\.environments\.build_concurrency: .*\(got "two"\)/);
    expect(message).toMatch(
      /v\.yaml:10: resilience\.generator\.llm\.endpoints\[0\]\.kind: .*\(got "olama"; did you mean "ollama"\?\)/,
    );
  });
});
