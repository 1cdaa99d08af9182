import { Body, Controller, Get, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import { ApiRoute, ProjectScope, refuseUnstorableText } from '@evals/platform';
import { GateService } from './gate.service';
import { GateVerdicts, type Actor } from './gate-verdicts';
import { GATE_BODY_SCHEMA, GateBodyModels, GateFamilyRequestBody, GateOverrideBody, GateRequestBody, GateVerdictDto } from './ingestion.dto';

const GATE_ID = { name: 'id', description: 'A gate id, as POST /v1/gate answered it.' };

/** The gate's HTTP surface (GT1-GT6, docs/gate.md). */
@Controller('v1/gate')
@GateBodyModels
export class GateController {
  constructor(
    private readonly gates: GateService,
    private readonly verdicts: GateVerdicts,
  ) {}

  @ApiRoute({
    tier: 'operator',
    summary: 'Gate a candidate (GT1-GT7): score it, compare it with its baseline, record a pass or fail verdict',
    body: { schema: GATE_BODY_SCHEMA, contentTypes: ['application/json'], description: 'One suite (GateRequestBody) or a family of suites (GateFamilyRequestBody).' },
    ok: { status: 200, type: GateVerdictDto, description: 'The recorded verdict with its reasons, rates and intervals.' },
    errors: ['INVALID_REQUEST', 'OUTPUT_TOO_LARGE', 'SUITE_NOT_FOUND', 'SUITE_VERSION_NOT_FOUND', 'UNKNOWN_CASE', 'DUPLICATE_OUTPUT', 'DUPLICATE_SUITE', 'EMPTY_RUN', 'RUN_ID_CONFLICT', 'UNKNOWN_RUN', 'RUN_PENDING', 'BASELINE_NOT_FOUND', 'BASELINE_OTHER_SUITE', 'BUS_UNAVAILABLE'],
  })
  @Post()
  @HttpCode(200)
  gate(@ProjectScope() project: string, @Body() body: GateRequestBody | GateFamilyRequestBody): Promise<GateVerdictDto> {
    // The gate's parser validates either shape, naming the field of every refusal.
    return this.gates.gate(project, body) as Promise<unknown> as Promise<GateVerdictDto>;
  }

  @ApiRoute({ tier: 'viewer', summary: 'A recorded gate verdict with its overrides (GT5)', ok: { status: 200, type: GateVerdictDto, description: 'The verdict, effective after overrides.' }, errors: ['GATE_NOT_FOUND'] })
  @ApiParam(GATE_ID)
  @Get(':id')
  status(@ProjectScope() project: string, @Param('id') id: string): Promise<GateVerdictDto> {
    return this.verdicts.status(project, id) as Promise<unknown> as Promise<GateVerdictDto>;
  }

  @ApiRoute({
    tier: 'admin',
    summary: 'Override a failed gate with a written reason (GT5); the recorded verdict never changes',
    body: GateOverrideBody,
    ok: { status: 200, type: GateVerdictDto, description: 'The verdict after the override.' },
    errors: ['INVALID_REQUEST', 'GATE_NOT_FOUND', 'NOTHING_TO_OVERRIDE'],
  })
  @ApiParam(GATE_ID)
  @Post(':id/override')
  @HttpCode(200)
  override(
    @ProjectScope() project: string,
    @Param('id') id: string,
    @Body() body: GateOverrideBody | undefined, @Req() req: { principal?: { id?: string; key_id?: string; name?: string } }): Promise<GateVerdictDto> {
    const p = req.principal;
    const actor: Actor = { key_id: p?.key_id ?? p?.id ?? 'anonymous', name: p?.name ?? 'anonymous' };
    const reason = (body as { reason?: unknown } | undefined)?.reason;
    refuseUnstorableText([['reason', reason]]);
    return this.verdicts.override(project, id, reason, actor) as Promise<unknown> as Promise<GateVerdictDto>;
  }
}
