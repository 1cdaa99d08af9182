import { Body, Controller, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiParam } from '@nestjs/swagger';
import type { ProjectRecord } from '@evals/persistence';
import { refuse as fail } from '../api-error';
import { ApiRoute } from '../api-route';
import { ProjectAnswerDto, ProjectCreateBody, ProjectsDto } from '../platform.dto';
import { API_KEY_STORE, type ApiKeyStore } from './api-key-store';
import { Principal, RequireTier } from './decorators';
import { keyProject, type AuthPrincipal } from './tiers';

/**
 * Projects over HTTP (issue 30, docs/adr/0009-projects.md). A platform admin key creates them; a project key
 * sees its own project only, and any other answers PROJECT_NOT_FOUND - whether it exists or not.
 */
@Controller('v1/projects')
export class ProjectsController {
  constructor(@Inject(API_KEY_STORE) private readonly keys: ApiKeyStore) {}

  @ApiRoute({
    tier: 'admin',
    summary: 'Create a project (platform admin keys only)',
    body: ProjectCreateBody,
    ok: { status: 201, type: ProjectAnswerDto, description: 'The new project.' },
    errors: ['INVALID_REQUEST', 'FORBIDDEN', 'PROJECT_ID_TAKEN'],
  })
  @RequireTier('admin')
  @Post()
  @HttpCode(201)
  async create(@Body() body: ProjectCreateBody, @Principal() principal: AuthPrincipal | null): Promise<{ project: ProjectRecord }> {
    if (keyProject(principal) !== null) fail('FORBIDDEN', 'only a platform admin key may create a project');
    const created = await this.keys.createProject({ id: body.id, name: body.name, createdBy: principal && !principal.auth_disabled ? `key:${principal.key_id} (${principal.name})` : null });
    if (!created) fail('PROJECT_ID_TAKEN', `a project ${body.id} exists`, 'id');
    return { project: created };
  }

  @ApiRoute({ tier: 'viewer', summary: "The projects the key may act in: its own, or every project for a platform key", ok: { status: 200, type: ProjectsDto, description: 'The projects.' } })
  @RequireTier('viewer')
  @Get()
  async list(@Principal() principal: AuthPrincipal | null): Promise<{ projects: ProjectRecord[] }> {
    const own = keyProject(principal);
    if (own === null) return { projects: await this.keys.listProjects() };
    const project = await this.keys.findProject(own);
    return { projects: project ? [project] : [] };
  }

  @ApiRoute({ tier: 'viewer', summary: 'One project', ok: { status: 200, type: ProjectAnswerDto, description: 'The project.' }, errors: ['PROJECT_NOT_FOUND'] })
  @ApiParam({ name: 'id', description: 'The project id.' })
  @RequireTier('viewer')
  @Get(':id')
  async find(@Param('id') id: string, @Principal() principal: AuthPrincipal | null): Promise<{ project: ProjectRecord }> {
    const own = keyProject(principal);
    const project = own === null || own === id ? await this.keys.findProject(id) : null;
    if (!project) fail('PROJECT_NOT_FOUND', 'no such project for this key', 'id');
    return { project };
  }
}
