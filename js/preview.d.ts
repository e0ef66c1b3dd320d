// Types for gguf-lens/preview: the <gguf-preview> custom element (defined on import, in browsers).
import type { GgufInput, GgufModel, Summary } from './index.js';

/** Shows what a GGUF file holds, read from its header alone. Attributes: `src` (a URL), `theme`
 * (`light` | `dark`; default: the user's colour scheme). Styled with CSS custom properties
 * `--gguf-preview-bg`, `-fg`, `-muted`, `-border`, `-accent`, `-code-bg`, `-radius`, `-font`.
 * Events: `load` (detail `{ summary }`), `error` (detail `{ message }`). */
export declare class GgufPreview extends HTMLElement {
  /** A File or Blob to preview (read with slice(): only the header's bytes). */
  file: Blob | null;
  /** Anything openGguf takes; setting it (re)loads the preview. */
  source: GgufInput | null;
  /** The open model once loaded. */
  readonly model: GgufModel | null;
}

export declare function compactCount(n: number): string;
export declare function formatBytes(n: number): string;
export declare function quantLabel(summary: Summary): string;

declare global {
  interface HTMLElementTagNameMap {
    'gguf-preview': GgufPreview;
  }
}
