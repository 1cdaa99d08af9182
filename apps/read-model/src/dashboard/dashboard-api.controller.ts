import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { isSafeId, isSuiteKey } from '@evals/contracts';
import { DashboardQueries, type CaseView, type Page, type RunListItem } from '@evals/persistence';
import { ApiError, ApiRoute, Principal, ProjectScope, type AuthPrincipal } from '@evals/platform';
import { CasePageDto, RunListPageDto, WhoAmIDto } from './dashboard.dto';

export const DASHBOARD_QUERIES = Symbol('DASHBOARD_QUERIES');

interface WhoAmI {
  readonly name: string;
  readonly tier: string;
  readonly auth_disabled: boolean;
  readonly project: string;
  readonly platform: boolean;
}

const VERDICTS = ['regressed', 'inconclusive_noise', 'no_regression', 'no_baseline', 'undecided'];
const STATUSES = ['open', 'sealed', 'completed'] as const;

function invalid(field: string, message: string): ApiError {
  return new ApiError('INVALID_REQUEST', message, field);
}

function page(offset: string | undefined, limit: string | undefined, maxLimit: number): { offset: number; limit: number } {
  const o = offset === undefined ? 0 : Number(offset);
  const l = limit === undefined ? 50 : Number(limit);
  if (!Number.isInteger(o) || o < 0 || o > 10_000_000) throw invalid('offset', 'offset must be a whole number from 0');
  if (!Number.isInteger(l) || l < 1 || l > maxLimit) throw invalid('limit', `limit must be a whole number from 1 to ${maxLimit}`);
  return { offset: o, limit: l };
}

function optionalId(field: string, value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (!isSafeId(value)) throw invalid(field, `${field} must be an id`);
  return value;
}

/**
 * The read model's list views for the dashboard (issue 17, docs/dashboard.md): paged, so a page of a
 * 10 000-case run is one indexed query; labels and scores only, never an output (D1). Each one answers
 * within the request's project only (issue 30).
 */
@Controller('v1')
export class DashboardApiController {
  constructor(@Inject(DASHBOARD_QUERIES) private readonly queries: DashboardQueries) {}

  /**
   * `GET /v1/run-list`: runs newest first, each with its pass rate, denominator and 95% Wilson interval and
   * its regression verdict once decided. Filters: `suite_key`, `subject_kind`, `subject_id`, `variant`,
   * `verdict` (a verdict or `undecided`), `status`; `offset`, `limit` (at most 200).
   */
  @ApiRoute({ tier: 'viewer', summary: 'Runs, newest first, with their pass rates, intervals and verdicts (the dashboard)', ok: { status: 200, type: RunListPageDto, description: 'One page of runs.' }, errors: ['INVALID_REQUEST'] })
  @Get('run-list')
  async runs(
    @ProjectScope() project: string,
    @Query('suite_key') suiteKey?: string,
    @Query('subject_kind') subjectKind?: string,
    @Query('subject_id') subjectId?: string,
    @Query('variant') variant?: string,
    @Query('verdict') verdict?: string,
    @Query('status') status?: string,
    @Query('offset') offset?: string,
    @Query('limit') limit?: string,
  ): Promise<Page<RunListItem>> {
    if (suiteKey !== undefined && suiteKey !== '' && !isSuiteKey(suiteKey)) throw invalid('suite_key', 'suite_key must be a suite key');
    if (verdict !== undefined && verdict !== '' && !VERDICTS.includes(verdict)) throw invalid('verdict', `verdict must be one of ${VERDICTS.join(', ')}`);
    if (status !== undefined && status !== '' && !(STATUSES as readonly string[]).includes(status)) throw invalid('status', `status must be one of ${STATUSES.join(', ')}`);
    const p = page(offset, limit, 200);
    return this.queries.runs(
      project,
      {
        suite_key: suiteKey || undefined,
        subject_kind: optionalId('subject_kind', subjectKind),
        subject_id: optionalId('subject_id', subjectId),
        variant: optionalId('variant', variant),
        verdict: verdict || undefined,
        status: (status || undefined) as (typeof STATUSES)[number] | undefined,
      },
      p.offset,
      p.limit,
    );
  }

  /** `GET /v1/runs/:id/cases`: one page of a run's cases by case id; `passed=true|false` filters. */
  @ApiRoute({ tier: 'viewer', summary: "One page of a run's cases by case id (labels only, D1)", ok: { status: 200, type: CasePageDto, description: 'One page of cases.' }, errors: ['INVALID_REQUEST', 'RUN_NOT_FOUND'] })
  @Get('runs/:id/cases')
  async cases(@ProjectScope() project: string, @Param('id') id: string, @Query('passed') passed?: string, @Query('offset') offset?: string, @Query('limit') limit?: string): Promise<Page<CaseView>> {
    if (passed !== undefined && passed !== '' && passed !== 'true' && passed !== 'false') throw invalid('passed', 'passed must be true or false');
    const p = page(offset, limit, 500);
    const found = await this.queries.cases(project, id, passed === 'true' ? { passed: true } : passed === 'false' ? { passed: false } : {}, p.offset, p.limit);
    if (!found) throw new ApiError('RUN_NOT_FOUND', 'no such run in the read model', 'id');
    return found;
  }

  /**
   * `GET /v1/whoami`: the key's name and tier, so the dashboard offers an override only to an admin, and the
   * project the page acts in (issue 30): a project key's own, or the one a platform key (`platform: true`)
   * named in `X-Evals-Project`.
   */
  @ApiRoute({ tier: 'viewer', summary: "The key's name, tier and project", ok: { status: 200, type: WhoAmIDto, description: 'The principal of the request.' } })
  @Get('whoami')
  whoami(@Principal() principal: AuthPrincipal | null, @ProjectScope() project: string): WhoAmI {
    return {
      name: principal?.name ?? 'anonymous',
      tier: principal?.tier ?? 'viewer',
      auth_disabled: Boolean(principal?.auth_disabled),
      project,
      // A key of no project may act in any (a platform key); with access control off there is no key at all.
      platform: principal !== null && !principal.auth_disabled && principal.project === null,
    };
  }
}
