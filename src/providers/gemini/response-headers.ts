import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * `@google/genai` turns a failed response into an `ApiError` with the status and body but drops the
 * headers, so a `Retry-After` from the API or from a gateway in front of it would be lost. Inside
 * `withResponseHeaders`, the last response's status and `Retry-After` are recorded for the caller.
 * The SDK calls the global `fetch` at request time; the wrapper installed here passes every call
 * through unchanged and only records when a devs-ctx request is in progress in this async context.
 */
export interface ResponseRecord {
  status?: number;
  retryAfter?: string;
}

const current = new AsyncLocalStorage<ResponseRecord>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const original = globalThis.fetch;
  const recording: typeof fetch = async (input, init) => {
    const response = await original(input, init);
    const record = current.getStore();
    if (record) {
      record.status = response.status;
      const retryAfter = response.headers.get('retry-after');
      if (retryAfter !== null) record.retryAfter = retryAfter;
      else delete record.retryAfter;
    }
    return response;
  };
  globalThis.fetch = recording;
}

/** Runs `call` with response recording; `record` holds what the last response said. */
export async function withResponseHeaders<T>(record: ResponseRecord, call: () => Promise<T>): Promise<T> {
  install();
  return current.run(record, call);
}
