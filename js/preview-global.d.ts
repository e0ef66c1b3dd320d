// gguf-lens/preview's types: preview.d.ts (generated from preview.js's JSDoc) and the one thing
// JSDoc cannot declare, the element's entry in the DOM's tag-name map (a global augmentation).
import type { GgufPreview } from './preview.js';

export * from './preview.js';

declare global {
  interface HTMLElementTagNameMap {
    'gguf-preview': GgufPreview;
  }
}
