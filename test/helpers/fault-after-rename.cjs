// Preloaded into a CLI run (`node --require`) by test/write-hardening.test.ts: once a file is renamed
// over DEVS_CTX_FAULT_PATH (an --in-place write's commit point), the next step fails as
// DEVS_CTX_FAULT says. The CLI bundle calls node:fs through the module object, so these replace it.
'use strict';
const fs = require('node:fs');

const target = process.env.DEVS_CTX_FAULT_PATH;
const fault = process.env.DEVS_CTX_FAULT;
let renamed = false;
const failure = (code) => Object.assign(new Error(`${code}: injected by a test`), { code });

const rename = fs.renameSync;
fs.renameSync = (from, to) => {
  // An agent's line that reaches the old file in the instant before the rename.
  if (fault === 'tail' && to === target) fs.appendFileSync(to, '{"id":"late","role":"user","type":"message","content":"appended in the last instant"}\n');
  rename(from, to);
  if (to === target) renamed = true;
};

const fsync = fs.fsyncSync;
fs.fsyncSync = (fd) => {
  if (renamed && fault === 'fsync') throw failure('EIO');
  return fsync(fd);
};

const close = fs.closeSync;
let closes = 0;
fs.closeSync = (fd) => {
  close(fd);
  if (renamed && fault === 'close' && closes++ === 0) throw failure('EIO');
};

const write = fs.writeSync;
let writes = 0;
fs.writeSync = (fd, buffer, offset, length, ...rest) => {
  // The tail copy's chunk: half of it goes out, then the disk is full.
  if (renamed && fault === 'tail' && buffer?.length === 1 << 16) {
    if (writes++ === 0) return write(fd, buffer, offset, Math.max(1, Math.floor(length / 2)), ...rest);
    throw failure('ENOSPC');
  }
  return write(fd, buffer, offset, length, ...rest);
};
