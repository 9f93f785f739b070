// Bundles the extension into one CommonJS file (dist/extension.js) so the .vsix needs no node_modules.
import * as esbuild from 'esbuild';

const production = !process.argv.includes('--dev');

await esbuild.build({
  entryPoints: ['src/extension.ts'],
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node18',
  outfile: 'dist/extension.js',
  external: ['vscode'],
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'info',
});
