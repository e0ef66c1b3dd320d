// DOM helpers: every string from a file reaches the DOM as a text node (el() / textContent),
// never as HTML. No state.
export const $ = (sel) => document.querySelector(sel);
export const $$ = (sel) => [...document.querySelectorAll(sel)];
const SVG_NS = 'http://www.w3.org/2000/svg';

export function el(tag, props, ...children) {
  const e = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null) continue;
      if (k === 'class') e.className = v;
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else if (k === 'on') for (const [ev, fn] of Object.entries(v)) e.addEventListener(ev, fn);
      else if (k === 'title') e.title = String(v);
      else if (/^(type|colspan|scope|value|disabled|role|rows|download|tabindex|aria-[a-z]+)$/.test(k)) e.setAttribute(k, String(v));
      else if (k === 'href' && /^blob:/.test(String(v))) e.setAttribute(k, String(v)); // only our own object URLs
      else throw new Error(`el: attribute ${k} not allowed`);
    }
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}
export function svg(tag, attrs = {}, ...children) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}
export function clear(node) { node.replaceChildren(); return node; }
