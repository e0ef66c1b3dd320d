// embed.html: one <gguf-preview> for the URL in ?url= (default: the bundled sample).
import './pkg/preview.js';

const params = new URLSearchParams(location.search);
const preview = document.getElementById('preview');
const theme = params.get('theme');
if (theme === 'light' || theme === 'dark') preview.setAttribute('theme', theme);
const url = new URL(params.get('url') ?? 'sample/tiny-llama-Q4_K_M.gguf', location.href);
// Only http(s): never javascript: or data: from the query string.
if (url.protocol === 'http:' || url.protocol === 'https:') preview.setAttribute('src', url.href);
else preview.source = { byteLength: 0, slice: () => { throw new Error(`only http(s) URLs are read, not ${url.protocol}`); } };
