import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Every file or folder of this repository that README.md and docs/*.md cite exists: a doc that
// points at a file nobody can open is wrong (issue #34, item 18). Cited as `path` or as a link.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SKIPPED = new Set(['node_modules', '.git', 'dist', 'artifacts', '.atrium', 'coverage']);

/** Every file and folder of the checkout, relative to the root (build output and dependencies left out). */
function tree(dir = ROOT, into = { files: new Set<string>(), dirs: new Set<string>() }) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const path = relative(ROOT, join(dir, entry.name));
    if (entry.isDirectory()) {
      into.dirs.add(path);
      tree(join(dir, entry.name), into);
    } else into.files.add(path);
  }
  return into;
}

/** Citations that name no file of the checkout on purpose, each with its reason. */
const NOT_IN_REPOSITORY: Record<string, string> = {
  'demo.mjs': 'README walk-through: the reader saves it',
  'accept.mjs': 'README walk-through: the reader saves it',
  'dsync.mjs': 'README walk-through 7: the reader saves it',
  'sso.mjs': 'README walk-through 8: the reader saves it',
  'directory.json': 'README walk-through 7: the CLI writes it',
  'ipaddr.js': 'an npm package, not a file',
  'server/dist/main.mjs': 'built by `npm start`',
  'src/': "any workspace package's source folder",
};

/** Docs write paths from the root, or from the folder the text is about (tests, a package's src). */
const BASES = ['', 'tests/src/', 'routers/src/', 'rest-facade/src/', 'server/src/', 'db/src/', 'docs/'];
const FILE = /\.(ts|tsx|mjs|cjs|js|json|md|ya?ml|sql|css|sh|toml|txt|html)$/;

/** What a doc cites that looks like a path: `code` spans and link targets, no URLs, globs or placeholders. */
function citedPaths(text: string): string[] {
  const spans = [...text.matchAll(/`([^`\s]+)`/g)].map((m) => m[1] ?? '');
  const links = [...text.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)].map((m) => m[1] ?? '');
  return [...new Set([...spans, ...links])]
    .filter((c) => !/^[a-z]+:|^@|^\/|[*<>{}…$]|node_modules/.test(c))
    .map((c) => c.replace(/^\.\//, '').replace(/[.,;:]$/, ''))
    .filter((c) => FILE.test(c) || (c.endsWith('/') && c.includes('/')));
}

describe('paths cited in the docs', () => {
  const { files, dirs } = tree();
  const names = new Set([...files, ...dirs].map((p) => basename(p)));
  const docs = ['README.md', ...[...files].filter((f) => /^docs\/[^/]+\.md$/.test(f)).sort()];

  it.each(docs)('%s cites only files that exist', (doc) => {
    const missing = citedPaths(readFileSync(join(ROOT, doc), 'utf8')).filter((cited) => {
      if (cited in NOT_IN_REPOSITORY) return false;
      const path = cited.replace(/\/$/, '');
      if (!path.includes('/')) return !names.has(path);
      const candidates = [...BASES.map((base) => base + path), join(dirname(doc), path)];
      return !candidates.some((p) => files.has(p) || dirs.has(p) || existsSync(join(ROOT, p)));
    });
    expect(missing).toEqual([]);
  });
});
