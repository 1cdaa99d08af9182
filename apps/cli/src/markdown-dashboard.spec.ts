import { runView } from './cli.testing';
import { dashboardRunUrl, renderMarkdown } from './markdown';
import { fromRunView } from './report';

describe('unit: the Markdown summary links to the run page of the dashboard when a public address is set (issue 17)', () => {
  it('links <EVALS_PUBLIC_URL>/runs/<id> once, with the id encoded; without the address it has no link', () => {
    const report = fromRunView(runView({ run_id: 'ci-4711', n: 50, passed: 45 }));
    const md = renderMarkdown(report, { dashboardUrl: 'https://evals.example.com/' });
    expect(md).toContain('[Open run ci-4711 in the dashboard](https://evals.example.com/runs/ci-4711)');
    expect(md.match(/\]\(/g)).toHaveLength(1);
    expect(renderMarkdown(report)).not.toMatch(/\]\(/);
    expect(renderMarkdown(report, { dashboardUrl: '' })).not.toMatch(/\]\(/);
  });

  it('keeps a path prefix, encodes what would end the link early, refuses anything but http(s) without credentials', () => {
    expect(dashboardRunUrl('https://ci.example/evals/', 'run:1@a')).toBe('https://ci.example/evals/runs/run%3A1%40a');
    expect(dashboardRunUrl('https://ci.example/a(b)/', 'r')).toBe('https://ci.example/a%28b%29/runs/r');
    expect(dashboardRunUrl('javascript:alert(1)', 'r')).toBeNull();
    expect(dashboardRunUrl('https://user:pw@ci.example', 'r')).toBeNull();
    expect(dashboardRunUrl('not a url', 'r')).toBeNull();
    expect(dashboardRunUrl(undefined, 'r')).toBeNull();
  });
});
