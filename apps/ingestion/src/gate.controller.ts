import { Body, Controller, Get, HttpCode, Param, Post, Req } from '@nestjs/common';
import { RequireTier } from '@evals/platform';
import { GateService } from './gate.service';
import { GateVerdicts, type Actor } from './gate-verdicts';

/** The gate's HTTP surface (GT1-GT6, docs/gate.md). */
@Controller('v1/gate')
export class GateController {
  constructor(
    private readonly gates: GateService,
    private readonly verdicts: GateVerdicts,
  ) {}

  @RequireTier('operator')
  @Post()
  @HttpCode(200)
  gate(@Body() body: unknown): Promise<Record<string, unknown>> {
    return this.gates.gate(body);
  }

  @RequireTier('viewer')
  @Get(':id')
  status(@Param('id') id: string): Promise<Record<string, unknown>> {
    return this.verdicts.status(id);
  }

  @RequireTier('admin')
  @Post(':id/override')
  @HttpCode(200)
  override(@Param('id') id: string, @Body() body: { reason?: unknown } | undefined, @Req() req: { principal?: { id?: string; key_id?: string; name?: string } }): Promise<Record<string, unknown>> {
    const p = req.principal;
    const actor: Actor = { key_id: p?.key_id ?? p?.id ?? 'anonymous', name: p?.name ?? 'anonymous' };
    return this.verdicts.override(id, body?.reason, actor);
  }
}
