// `npm run build`: the framework bundle (bin/framework-bundle.js) into dist/framework, for the installed
// package, whose bin/evals.js runs dist/ and has no esbuild to build it. Fails the build when it cannot be
// built, rather than shipping a package that starts a second slower.
const path = require('node:path');
const { frameworkBundle } = require('../bin/framework-bundle');

const root = path.join(__dirname, '..');
if (frameworkBundle(root, path.join(root, 'dist', 'framework')) === null) {
  process.stderr.write('build: the framework bundle could not be built (is esbuild installed? EVALS_FRAMEWORK_BUNDLE=0?)\n');
  process.exit(1);
}
