/** One broken rule: the importing file, the rule's name, what it reached, and how it is printed. */
export interface LayeringViolation {
  from: string;
  rule: string;
  to: string;
  detail: string;
}

/** Runs every layering and structure check on the tree at `root` (default: this repository). */
export function checkLayering(options?: { root?: string; cache?: boolean }): Promise<{
  violations: LayeringViolation[];
  files: number;
  comments: Map<string, string>;
}>;

/** The violations grouped by file, then what each broken rule asks (what `npm run lint` prints). */
export function formatViolations(list: LayeringViolation[], comments: Map<string, string>): string;
