import {
  chmodSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

/** The lock file of an embedded data directory: the pid of the process that has it open. */
export const LOCK_FILE = 'atrium.pid';

/** Lock files this process holds: a second open of one directory in the same process is refused too. */
const held = new Set<string>();

/** Another process (or this one) has the data directory open. */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      pid === process.pid
        ? `The data directory ${dataDir} is already open in this process (pid ${pid}).`
        : `The data directory ${dataDir} is in use by another Atrium process (pid ${pid}, see ${join(dataDir, LOCK_FILE)}). ` +
            'Stop that process first, or give this one another data directory (ATRIUM_DATA_DIR).',
    );
    this.name = 'DataDirInUseError';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid in a lock file; null when the file is gone, undefined when it holds no pid. */
function lockHolder(file: string): number | null | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Creates the file with our pid, atomically and only if it does not exist: the pid is written
 * to a private temporary file first and hard-linked into place, so a reader never sees the lock
 * empty. Where hard links are not supported, an exclusive create.
 */
function createLock(file: string): boolean {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${process.pid}\n`, { mode: 0o600 });
  try {
    linkSync(tmp, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
    try {
      writeFileSync(file, `${process.pid}\n`, { mode: 0o600, flag: 'wx' });
      return true;
    } catch (inner) {
      if ((inner as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw inner;
    }
  } finally {
    unlinkSync(tmp);
  }
}

/**
 * Locks an embedded data directory for this process before anything opens it, so a second
 * server (or `npm run worker`) on the same directory stops at once, naming the holder, instead
 * of opening the database under the first. A lock whose process is gone (a crash, a SIGKILL, a
 * restarted container reusing our pid) is taken over. Returns the release: it removes the file
 * if it is still ours, and also runs when the process exits.
 */
export function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, LOCK_FILE);
  if (held.has(file)) throw new DataDirInUseError(dataDir, process.pid);
  for (let attempt = 0; !createLock(file); attempt++) {
    const holder = lockHolder(file);
    if (holder === null) continue; // released meanwhile: try again
    if (holder !== undefined && holder !== process.pid && isAlive(holder)) throw new DataDirInUseError(dataDir, holder);
    // Stale. Two processes taking over the same stale lock at the same instant could both
    // succeed; the next attempt re-reads the holder, which narrows that to the unlink below.
    if (attempt >= 3) throw new Error(`Could not take the lock ${file}: it keeps coming back; try again.`);
    try {
      unlinkSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  held.add(file);
  const release = () => {
    process.removeListener('exit', release);
    if (!held.delete(file)) return;
    if (lockHolder(file) === process.pid) unlinkSync(file);
  };
  process.once('exit', release);
  return release;
}

/**
 * Makes the data directory private before the database writes to it: it holds webhook secrets
 * and the generated master key. New directories (and the parents made with them) are 0700; an
 * existing one that others could read is tightened, with a warning.
 */
export function makeDataDirPrivate(dataDir: string, warn: (message: string) => void): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const mode = statSync(dataDir).mode & 0o777;
  if (mode & 0o077) {
    chmodSync(dataDir, 0o700);
    warn(`The data directory ${dataDir} was open to other users (mode ${mode.toString(8)}); it is now 0700.`);
  }
}

/**
 * Takes group and other permissions off everything under the directory. PGlite's initdb writes
 * its files 0666 whatever the umask; PostgreSQL's own later files are 0600.
 */
export function keepFilesPrivate(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    const mode = lstatSync(path).mode & 0o777;
    if (mode & 0o077) chmodSync(path, mode & 0o700);
    if (entry.isDirectory()) keepFilesPrivate(path);
  }
}
