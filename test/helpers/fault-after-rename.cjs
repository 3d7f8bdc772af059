// Preloaded into a CLI run (`node --require`) by test/write-hardening.test.ts to make a write fail at
// a chosen step, as DEVS_CTX_FAULT says (comma-separated). Once a file is renamed over
// DEVS_CTX_FAULT_PATH (an --in-place write's commit point), the steps after it fail; `temp-*`
// faults fail the temporary file's steps before any rename; `device-*` faults a write to
// /dev/null. Calls made after the rename are logged to DEVS_CTX_FAULT_LOG. The CLI bundle calls
// node:fs through the module object, so these replace what it calls.
'use strict';
const fs = require('node:fs');

const target = process.env.DEVS_CTX_FAULT_PATH;
const faults = new Set((process.env.DEVS_CTX_FAULT ?? '').split(',').filter(Boolean));
const log = process.env.DEVS_CTX_FAULT_LOG;
let renamed = false;
// Each step's failure says which it is, so a test can tell which error was told.
const failure = (code, step = 'by a test') => Object.assign(new Error(`${code}: injected ${step}`), { code });
const note = (what) => {
  if (renamed && log) fs.appendFileSync(log, `${what}\n`);
};
const LATE = '{"id":"late","role":"user","type":"message","content":"appended in the last instant"}\n';
const AGENT = '{"id":"agent","role":"user","type":"message","content":"appended by name during the copy"}\n';

/** What each descriptor opened: a temporary file beside the target, /dev/null, or another file. */
const kinds = new Map();
const open = fs.openSync;
fs.openSync = (path, ...rest) => {
  const fd = open(path, ...rest);
  const name = String(path);
  // A temporary file of the transcript's (not of its lock's).
  const temp = name.endsWith('.tmp') && name.includes('.devs-ctx-') && !name.includes('.lock');
  kinds.set(fd, temp ? 'temp' : name === '/dev/null' ? 'device' : 'other');
  return fd;
};

const rename = fs.renameSync;
fs.renameSync = (from, to) => {
  // An agent's line that reaches the old file in the instant before the rename.
  if ((faults.has('tail') || faults.has('tail-agent') || faults.has('fstat') || faults.has('close-old')) && to === target) fs.appendFileSync(to, LATE);
  rename(from, to);
  if (to === target) renamed = true;
};

const fstat = fs.fstatSync;
let fstats = 0;
fs.fstatSync = (fd, ...rest) => {
  if (renamed && faults.has('fstat') && fstats++ === 0) throw failure('EIO');
  return fstat(fd, ...rest);
};

const fsync = fs.fsyncSync;
fs.fsyncSync = (fd) => {
  note('fsync');
  if (renamed && faults.has('fsync')) throw failure('EIO');
  if (kinds.get(fd) === 'temp' && faults.has('temp-fsync')) throw failure('EIO', 'into the fsync');
  return fsync(fd);
};

const close = fs.closeSync;
let closes = 0;
fs.closeSync = (fd) => {
  const kind = kinds.get(fd);
  close(fd);
  note('close');
  // The first close after the rename is the new file's, the second the old one's.
  const nth = renamed ? closes++ : -1;
  if ((faults.has('close') && nth === 0) || (faults.has('close-old') && nth === 1)) throw failure('EIO');
  if ((kind === 'temp' && faults.has('temp-close')) || (kind === 'device' && faults.has('device-close'))) throw failure('EIO', 'into the close');
};

const write = fs.writeSync;
let writes = 0;
fs.writeSync = (fd, buffer, offset, length, ...rest) => {
  if (kinds.get(fd) === 'device' && faults.has('device-write')) throw failure('ENOSPC');
  // The tail copy's chunk: half of it goes out, then the disk is full (and, for `tail-agent`, an
  // agent appends a line by name in between).
  if (renamed && (faults.has('tail') || faults.has('tail-agent')) && buffer?.length === 1 << 16) {
    if (writes++ === 0) {
      const half = write(fd, buffer, offset, Math.max(1, Math.floor(length / 2)), ...rest);
      if (faults.has('tail-agent')) fs.appendFileSync(target, AGENT);
      return half;
    }
    throw failure('ENOSPC');
  }
  return write(fd, buffer, offset, length, ...rest);
};
