/**
 * A module loaded on first use and kept: `lazy(() => import('pkg'))` returns a function whose
 * calls share one `import()`, so a process that never calls it never holds the package
 * (bench/README.md, "The fifteenth session": RSS).
 */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= load();
    return loading;
  };
}
