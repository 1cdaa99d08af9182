import { parseOptions, required, SERVER_OPTION_HELP, SERVER_OPTIONS, type Command } from '../command';
import { EXIT } from '../exit-codes';
import { styles, table } from '../format';
import { clientFor, isObject, url } from '../http';
import { checkProjectId } from '../project';

/**
 * `evals project create` and `evals project list` (issue 30, docs/adr/0009-projects.md): the projects of the
 * service, on the ingestion API (`/v1/projects`). A project is created with a platform admin key - or on the
 * embedded default, which runs without auth - and is then named with `--project` / EVALS_PROJECT.
 */
export const projectCreateCommand: Command = {
  name: 'project create',
  service: true,
  summary: 'Create a project: suites, runs, baselines and gates that only its keys see (platform admin; issue 30).',
  usage: 'evals project create ID [--name NAME] [--json]',
  options: ['--name NAME              display name (default: the id)', '--json                   print the API answer as JSON', ...SERVER_OPTION_HELP],
  example: 'evals project create team-a --name "Team A"\nevals --project team-a suite push examples/support-triage.suite.yaml',
  async run(args, io) {
    const { values, positionals } = parseOptions(args, { name: { type: 'string' }, json: { type: 'boolean' }, ...SERVER_OPTIONS }, { min: 1, max: 1, names: 'project ID' });
    const id = checkProjectId(positionals[0], 'project ID');
    const name = values.name === undefined ? id : required(values.name, '--name');
    const client = clientFor(values, io, 60);
    const answer = await client.post(url(client.endpoints.ingestion, '/v1/projects'), { json: { id, name } });
    if (values.json) {
      io.out(JSON.stringify(answer.body, null, 2));
      return EXIT.PASS;
    }
    io.out(`${styles(io.env, io.isTty).green('created')} project ${id}: use it with --project ${id} (or EVALS_PROJECT=${id})`);
    return EXIT.PASS;
  },
};

export const projectListCommand: Command = {
  name: 'project list',
  service: true,
  summary: "List the projects the key may act in: its own, or every one for a platform key (issue 30).",
  usage: 'evals project list [--json]',
  options: ['--json                   print the API answer as JSON', ...SERVER_OPTION_HELP],
  example: 'evals project list',
  async run(args, io) {
    const { values } = parseOptions(args, { json: { type: 'boolean' }, ...SERVER_OPTIONS });
    const client = clientFor(values, io, 60);
    const answer = await client.get(url(client.endpoints.ingestion, '/v1/projects'));
    if (values.json) {
      io.out(JSON.stringify(answer.body, null, 2));
      return EXIT.PASS;
    }
    const projects = isObject(answer.body) && Array.isArray(answer.body.projects) ? answer.body.projects.filter(isObject) : [];
    const rows = [['project', 'name', 'created at']];
    for (const p of projects) rows.push([String(p.id), String(p.name), String(p.created_at ?? '')]);
    io.out(table(rows));
    return EXIT.PASS;
  },
};
