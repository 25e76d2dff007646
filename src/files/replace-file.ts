// Deed writes files whole into directories an operator gives it, where earlier files may
// stand: private keys (the serving key, its CA's key), and the reaper's metrics, which a
// reader must never see half-written. writeFileSync's `mode` applies only to a file it
// creates, so a key written over an earlier 0644 file stayed readable by all, and a symlink
// planted at the name sent the key to the link's target. A file is instead written new
// beside its name (never through a link: O_EXCL refuses one, O_NOFOLLOW too where the
// platform has it) with its mode, then renamed over the name, which replaces a link itself.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fchmodSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';

export function replaceFile(file: string, data: string, mode: number): void {
  const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), mode);
  try {
    // The umask may have taken bits off at creation; a wider mode is never wanted for a key.
    fchmodSync(fd, mode);
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}
