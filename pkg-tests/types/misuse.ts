// Must NOT compile: types.test.mjs checks that tsc rejects it, so the consumer check can fail.
import { openGguf } from 'gguf-lens';

export async function misuse(): Promise<void> {
  const model = await openGguf('https://example.invalid/m.gguf');
  const rows: string = await model.readTensor('x', { rows: [0, 1] });
  console.log(rows);
}
