/**
 * The classifier of failed builds (stages/swe5g/harness/build-log.ts) on log excerpts of each
 * toolchain as the tools print them (Go's from the host's go 1.26 `go test -json` with
 * GOPROXY=off, meson's, pip's and uv's): an environment fault (a dependency that could not be
 * obtained) against the code's own failure, and the lines quoted for each.
 */
import { describe, expect, it } from 'vitest';
import {
  dependencyFault,
  firstErrorLines,
  plainLog,
} from '../../../../stages/swe5g/harness/build-log.js';

/** `go test -json ./...` at a parent whose go.mod requires a module the empty cache lacks. */
const GO_LOOKUP_DISABLED = [
  '{"ImportPath":"example.com/absentdep/dep","Action":"build-output","Output":"# example.com/envdep/nf\\n"}',
  '{"ImportPath":"example.com/absentdep/dep","Action":"build-output","Output":"nf/nf.go:3:8: module lookup disabled by GOPROXY=off\\n"}',
  '{"ImportPath":"example.com/absentdep/dep","Action":"build-fail"}',
  '{"Time":"2026-12-03T19:33:21.910088266Z","Action":"start","Package":"example.com/envdep/nf"}',
  '{"Time":"2026-12-03T19:33:21.910156903Z","Action":"output","Package":"example.com/envdep/nf","Output":"FAIL\\texample.com/envdep/nf [setup failed]\\n"}',
  '{"Time":"2026-12-03T19:33:21.910164972Z","Action":"fail","Package":"example.com/envdep/nf","Elapsed":0,"FailedBuild":"example.com/absentdep/dep"}',
  'go: downloading example.com/absentdep v1.0.0',
].join('\n');

/** The same run with a genuine compile error at the parent. */
const GO_COMPILE = [
  '{"ImportPath":"example.com/envdep/nf [example.com/envdep/nf.test]","Action":"build-output","Output":"# example.com/envdep/nf [example.com/envdep/nf.test]\\n"}',
  '{"ImportPath":"example.com/envdep/nf [example.com/envdep/nf.test]","Action":"build-output","Output":"nf/nf.go:10:32: undefined: undefinedName\\n"}',
  '{"ImportPath":"example.com/envdep/nf [example.com/envdep/nf.test]","Action":"build-fail"}',
  '{"Time":"2026-12-03T19:28:21.018494016Z","Action":"output","Package":"example.com/envdep/nf","Output":"FAIL\\texample.com/envdep/nf [build failed]\\n"}',
].join('\n');

describe('dependencyFault: Go', () => {
  it('module lookup disabled (JSON lines, the cause in a build-output event) is the environment', () => {
    const f = dependencyFault(GO_LOOKUP_DISABLED, 'go');
    expect(f?.reason).toMatch(/module cache/);
    expect(f?.lines).toEqual(['nf/nf.go:3:8: module lookup disabled by GOPROXY=off']);
  });

  it.each([
    [
      'a proxy 404',
      'go: github.com/free5gc/nas@v1.1.2-0.20230726: reading https://proxy.golang.org/github.com/free5gc/nas/@v/v1.1.2-0.20230726.mod: 404 Not Found\n\tserver response: not found',
    ],
    [
      'a proxy 410',
      'go: example.com/gone@v1.0.0: reading https://proxy.example/example.com/gone/@v/v1.0.0.zip: 410 Gone',
    ],
    [
      'no network',
      'go: github.com/free5gc/util@v1.0.6: Get "https://proxy.golang.org/github.com/free5gc/util/@v/v1.0.6.mod": dial tcp: lookup proxy.golang.org on 127.0.0.53:53: no such host',
    ],
    [
      'a proxy through an unreachable HTTP proxy',
      'go: example.com/x@v1.2.3: Get "https://proxy.golang.org/example.com/x/@v/v1.2.3.mod": proxyconnect tcp: dial tcp 10.0.0.1:3128: i/o timeout',
    ],
    [
      'a checksum mismatch (go.sum pins other bytes)',
      'verifying github.com/aws/aws-sdk-go@v1.44.0: checksum mismatch\n\tdownloaded: h1:aaa=\n\tgo.sum:     h1:bbb=\n\nSECURITY ERROR\nThis download does NOT match an earlier download recorded in go.sum.',
    ],
  ])('%s is the environment', (_what, log) => {
    expect(dependencyFault(log, 'go')).not.toBeNull();
  });

  it.each([
    ['a compile error', GO_COMPILE],
    [
      'an import no go.mod requirement covers (Go looks it up only because go.mod lacks it)',
      'a.go:3:8: cannot find module providing package github.com/google/uuid: module lookup disabled by GOPROXY=off',
    ],
    [
      'a go.sum the commit left incomplete',
      'nf/nf.go:5:2: missing go.sum entry for module providing package github.com/google/uuid (imported by example.com/m/nf); to add:\n\tgo get example.com/m/nf',
    ],
    [
      'a go.mod the commit left untidy',
      'go: updates to go.mod needed; to update it:\n\tgo mod tidy',
    ],
    [
      "a test's own network error in another package's output",
      `${GO_COMPILE}\n{"Action":"output","Package":"example.com/envdep/sbi","Test":"TestClient","Output":"    client_test.go:20: Get \\"http://127.0.0.1:8000/x\\": dial tcp 127.0.0.1:8000: connect: connection refused\\n"}`,
    ],
  ])('%s is the code', (_what, log) => {
    expect(dependencyFault(log, 'go')).toBeNull();
  });
});

describe('dependencyFault: C/meson', () => {
  it('a required dependency meson cannot find is the environment; the optional one before it is not quoted', () => {
    const log = [
      'Run-time dependency libmongoc-1.0 found: YES 1.23.1',
      'Run-time dependency libsctp found: NO (tried pkgconfig and cmake)',
      'Run-time dependency talloc found: NO (tried pkgconfig and cmake)',
      '',
      'meson.build:120:0: ERROR: Dependency "talloc" not found, tried pkgconfig and cmake',
    ].join('\n');
    expect(dependencyFault(log, 'c-meson')).toEqual({
      reason: 'a required system dependency is not installed',
      lines: ['meson.build:120:0: ERROR: Dependency "talloc" not found, tried pkgconfig and cmake'],
    });
    expect(
      dependencyFault("lib/sctp/meson.build:30:4: ERROR: C library 'sctp' not found", 'c-meson'),
    ).not.toBeNull();
    expect(
      dependencyFault(
        'Found pkg-config: NO\nmeson.build:1:0: ERROR: Pkg-config binary for machine MachineChoice.HOST not found. Giving up.',
        'c-meson',
      )?.reason,
    ).toBe('pkg-config is not installed');
  });

  it("a compiler error (and a missing header, which may be the repository's own) is the code", () => {
    const log = [
      '[12/340] Compiling C object src/amf/libamf.a.p/ngap-handler.c.o',
      'FAILED: src/amf/libamf.a.p/ngap-handler.c.o',
      "../src/amf/ngap-handler.c:123:5: error: 'ran_ue' undeclared (first use in this function)",
      'ninja: build stopped: subcommand failed.',
    ].join('\n');
    expect(dependencyFault(log, 'c-meson')).toBeNull();
    expect(
      dependencyFault(
        '../lib/core/ogs-core.h:40:10: fatal error: talloc.h: No such file or directory',
        'c-meson',
      ),
    ).toBeNull();
  });
});

describe('dependencyFault: Python', () => {
  it.each([
    [
      'pip resolution',
      'ERROR: Could not find a version that satisfies the requirement grpcio==1.16.1 (from versions: none)\nERROR: No matching distribution found for grpcio==1.16.1',
    ],
    [
      'uv resolution',
      '  × No solution found when resolving dependencies:\n  ╰─▶ Because grpcio was not found in the package registry and you require grpcio==1.16.1, we can conclude that your requirements are unsatisfiable.',
    ],
    [
      "pip's network retries",
      "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')': /simple/grpcio/",
    ],
  ])('%s is the environment', (_what, log) => {
    expect(dependencyFault(log, 'python')).not.toBeNull();
  });

  it.each([
    [
      'a SyntaxError',
      '  File "/testbed/lte/gateway/python/magma/mobilityd/ip_allocator.py", line 42\n    def allocate(self, sid\n                          ^\nSyntaxError: invalid syntax',
    ],
    [
      'a ModuleNotFoundError (may be a module the commit moved: kept a verdict)',
      "E   ModuleNotFoundError: No module named 'magma.common.redis'",
    ],
    [
      "a test's own connection error",
      "E   requests.exceptions.ConnectionError: HTTPConnectionPool(host='localhost', port=8080): Max retries exceeded with url: / (Caused by NewConnectionError('Failed to establish a new connection: [Errno 111] Connection refused'))",
    ],
  ])('%s is the code', (_what, log) => {
    expect(dependencyFault(log, 'python')).toBeNull();
  });

  it("patterns are the recipe's: a Go cause in a Python log is not read", () => {
    expect(dependencyFault(GO_LOOKUP_DISABLED, 'python')).toBeNull();
  });
});

describe('firstErrorLines on go test -json logs', () => {
  it('quotes the cause first, never a go: downloading line nor a raw JSON object', () => {
    const lines = firstErrorLines(GO_LOOKUP_DISABLED);
    expect(lines[0]).toBe('nf/nf.go:3:8: module lookup disabled by GOPROXY=off');
    expect(lines.some((l) => l.startsWith('{') || l.startsWith('go: downloading'))).toBe(false);
  });

  it('quotes a compile error decoded from its build-output event', () => {
    expect(firstErrorLines(GO_COMPILE)).toEqual(['nf/nf.go:10:32: undefined: undefinedName']);
  });

  it('plainLog keeps a line that only looks like JSON', () => {
    expect(plainLog('{"a": 1}\n{"Action":"output","Output":"ok\\n"}')).toEqual(['{"a": 1}', 'ok']);
  });
});
