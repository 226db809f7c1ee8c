/**
 * Inputs of the Strategy A direct call (issue 16, "Strategy A on real code"): on real free5GC
 * processors (`func (p *Processor) X(c *gin.Context, ...)`) a zero `gin.Context` has no writer, so
 * `c.JSON` / `c.Status` panicked inside gin at both commits and A was never kept. The generated
 * test now builds gin's own test context. Generation only: compiling it needs gin's module.
 */
import { describe, it, expect } from 'vitest';
import { goDirectCall } from '../../../../stages/swe5g/testgen/strategyA.js';
import type { FixSite } from '../../../../stages/swe5g/testgen/patterns.js';

const SRC = `package processor

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/free5gc/openapi/models"
)

type Processor struct{ Name string }

func (p *Processor) EapAuthConfirm(c *gin.Context, id string, body *models.EapSession) {
	if body == nil {
		c.Status(http.StatusBadRequest)
		return
	}
	c.JSON(http.StatusOK, body.EapPayload)
}
`;

const site = (operand: string): FixSite => ({
  file: 'internal/sbi/processor/ue_authentication.go',
  function: 'Processor.EapAuthConfirm',
  name: 'EapAuthConfirm',
  receiver: 'Processor',
  pattern: { kind: 'null_check', key: 'body != nil', operand, text: 'body == nil' },
  parentCount: 0,
  fixCount: 1,
  line: 14,
  strength: 'text',
});

describe('Strategy A inputs', () => {
  it("passes gin's test context for a *gin.Context parameter, nil for the guarded one", async () => {
    const call = await goDirectCall(SRC, 'processor', [site('body')]);
    expect(call.ok).toBe(true);
    if (!call.ok) return;
    expect(call.content).toContain(
      '\tf2pArg0, _ := gin.CreateTestContext(f2phttptest.NewRecorder())',
    );
    expect(call.content).toContain('\tf2pArg0.Request = f2phttptest.NewRequest("POST", "/", nil)');
    expect(call.content).toContain('\tf2phttptest "net/http/httptest"');
    expect(call.content).toContain('\tgin "github.com/gin-gonic/gin"');
    expect(call.content).toContain('\tvar f2pArg2 *models.EapSession');
    expect(call.content).toContain('\tf2pRecv.EapAuthConfirm(f2pArg0, f2pArg1, f2pArg2)');
  });

  it('passes a nil *gin.Context when the fix guards the context itself, and imports no httptest', async () => {
    const call = await goDirectCall(SRC.replace('body == nil', 'c == nil'), 'processor', [
      site('c'),
    ]);
    expect(call.ok).toBe(true);
    if (!call.ok) return;
    expect(call.content).toContain('\tvar f2pArg0 *gin.Context');
    expect(call.content).not.toContain('httptest');
  });
});
