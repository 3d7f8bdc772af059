// Preloaded into a CLI run (`node --require`) by test/write-hardening.test.ts: once a file is renamed
// over DEVS_CTX_FAULT_PATH (an --in-place write's commit point), the next step fails as
// DEVS_CTX_FAULT says; each call made after the rename is logged to DEVS_CTX_FAULT_LOG. The CLI
// bundle calls node:fs through the module object, so these replace what it calls.
'use strict';
const fs = require('node:fs');

const target = process.env.DEVS_CTX_FAULT_PATH;
const fault = process.env.DEVS_CTX_FAULT;
const log = process.env.DEVS_CTX_FAULT_LOG;
let renamed = false;
const failure = (code) => Object.assign(new Error(`${code}: injected by a test`), { code });
const note = (what) => {
  if (renamed && log) fs.appendFileSync(log, `${what}\n`);
};
const LATE = '{"id":"late","role":"user","type":"message","content":"appended in the last instant"}\n';
const AGENT = '{"id":"agent","role":"user","type":"message","content":"appended by name during the copy"}\n';

const rename = fs.renameSync;
fs.renameSync = (from, to) => {
  // An agent's line that reaches the old file in the instant before the rename.
  if (fault !== 'fsync' && fault !== 'close' && to === target) fs.appendFileSync(to, LATE);
  rename(from, to);
  if (to === target) renamed = true;
};

const fstat = fs.fstatSync;
let fstats = 0;
fs.fstatSync = (fd, ...rest) => {
  if (renamed && fault === 'fstat' && fstats++ === 0) throw failure('EIO');
  return fstat(fd, ...rest);
};

const fsync = fs.fsyncSync;
fs.fsyncSync = (fd) => {
  note('fsync');
  if (renamed && fault === 'fsync') throw failure('EIO');
  return fsync(fd);
};

const close = fs.closeSync;
let closes = 0;
fs.closeSync = (fd) => {
  close(fd);
  // The first close after the rename is the new file's, the second the old one's.
  const nth = renamed ? closes++ : -1;
  if ((fault === 'close' && nth === 0) || (fault === 'close-old' && nth === 1)) throw failure('EIO');
};

const write = fs.writeSync;
let writes = 0;
fs.writeSync = (fd, buffer, offset, length, ...rest) => {
  // The tail copy's chunk: half of it goes out, then the disk is full (and, for `tail-agent`, an
  // agent appends a line by name in between).
  if (renamed && (fault === 'tail' || fault === 'tail-agent') && buffer?.length === 1 << 16) {
    if (writes++ === 0) {
      const half = write(fd, buffer, offset, Math.max(1, Math.floor(length / 2)), ...rest);
      if (fault === 'tail-agent') fs.appendFileSync(target, AGENT);
      return half;
    }
    throw failure('ENOSPC');
  }
  return write(fd, buffer, offset, length, ...rest);
};
