import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * A real PostgreSQL engine (PGlite: PostgreSQL compiled to WASM, installed by `npm ci`) served over
 * the PostgreSQL wire protocol on a loopback port the OS picks, so the production `pg` client
 * talks to it exactly as to a server. A fresh, empty database per call; stopped when the test ends.
 *
 * PGlite is one backend: pglite-socket multiplexes the connections onto it, running one
 * transaction at a time. Concurrent clients therefore are served (and their transactions
 * serialised), which is what the many-writer tests exercise; row-level locking between truly
 * parallel backends is not.
 */
/** An empty database, created once per test file; each test gets a clone (faster than starting afresh). */
let template: Promise<PGlite> | undefined;

export async function startPostgres(t: { after(fn: () => Promise<void> | void): void }): Promise<{ url: string; password: string; port: number }> {
  template ??= PGlite.create();
  const db = (await (await template).clone()) as PGlite;
  const server = new PGLiteSocketServer({ db, port: 0, host: '127.0.0.1', maxConnections: 64 });
  await server.start();
  t.after(async () => {
    await server.stop();
    await db.close();
  });
  const port = Number(server.getServerConn().split(':').pop());
  // A password that must never show up in any output (PGlite accepts any).
  const password = 'pw-Zq7-never-print-me';
  return { url: `postgres://devs_ctx:${password}@127.0.0.1:${port}/postgres?sslmode=disable`, password, port };
}
