// Import boundaries between the layers (ARCHITECTURE.md). `npm run lint` fails when one is crossed.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'core-imports-only-core',
      comment: 'src/core is pure logic: it may import other core modules and npm packages, nothing else of ours.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
    {
      name: 'core-no-node-io',
      comment: 'src/core touches no file, process or network.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { dependencyTypes: ['core'], path: '^(node:)?(fs|fs/promises|child_process|net|http|https|worker_threads|readline)$' },
    },
    {
      name: 'io-imports-only-core',
      comment: 'src/io reads and writes bytes: besides itself it may use only src/core.',
      severity: 'error',
      from: { path: '^src/io/' },
      to: { path: '^src/', pathNot: '^src/(io|core)/' },
    },
    {
      name: 'io-not-formats',
      comment: 'src/io reads and writes bytes; what the bytes mean is src/formats.',
      severity: 'error',
      from: { path: '^src/io/' },
      to: { path: '^src/formats/' },
    },
    {
      name: 'render-not-commands',
      comment: 'Rendering takes report data (types in src/core) and never reaches back into a command.',
      severity: 'error',
      from: { path: '^src/cli/render/' },
      to: { path: '^src/cli/commands/' },
    },
    {
      name: 'fs-only-in-io-archive-cli',
      comment: 'Only src/io, src/archive and src/cli touch the file system.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(io|archive|cli)/' },
      to: { dependencyTypes: ['core'], path: '^(node:)?fs(/promises)?$' },
    },
    {
      name: 'library-not-cli',
      comment: 'The library entry never imports the CLI.',
      severity: 'error',
      from: { path: '^src/(index\\.ts|core|formats|io|providers|archive|orchestrator|prune)' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'no-circular',
      comment: 'Import cycles, type-only ones included.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js'] },
  },
};
