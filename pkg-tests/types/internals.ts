// Must NOT compile: the models' internals are left out of the declarations (@internal, tsc's
// stripInternal); types.test.mjs checks that tsc finds none of these.
import { openGguf } from 'gguf-lens';

export async function internals(): Promise<unknown[]> {
  const model = await openGguf('https://example.invalid/m.gguf');
  return [model.wasm, model.header, model.source, model._statsInputId, model._tensorIndex, model._checkpoint];
}
