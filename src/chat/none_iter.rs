//! jinja2 raises `TypeError: 'NoneType' object is not iterable` on `{% for x in none %}`;
//! minijinja iterates none as empty. Templates such as Hermes-2-Pro's tool_use loop over
//! `tools` without checking it, so with transformers' `tools=None` jinja2 fails where
//! minijinja would render. We rewrite every `for` tag's iterable `EXPR` to
//! `(EXPR)|__iter_not_none`, a filter that errors on none and passes anything else through
//! (undefined still iterates as empty, as jinja2's Undefined does).

/// The filter's name in the environment.
pub const FILTER: &str = "__iter_not_none";

/// `source` with each `{% for TARGET in EXPR [if COND] [recursive] %}` rewritten to iterate
/// `(EXPR)|__iter_not_none`. Text inside `{% raw %}` and comments is left alone; a tag this
/// scanner does not understand is left as it is (minijinja reports its syntax errors).
pub fn guard_for_loops(source: &str) -> String {
    let b = source.as_bytes();
    let mut out = String::with_capacity(source.len() + 64);
    let mut i = 0;
    let mut copied = 0;
    while i + 1 < b.len() {
        if b[i] == b'{' && b[i + 1] == b'#' {
            i = find(b, i + 2, b"#}").map_or(b.len(), |e| e + 2);
            continue;
        }
        if b[i] == b'{' && b[i + 1] == b'{' {
            // An expression: skip it, so a `{%` inside one of its strings is not a tag.
            i = close(b, i + 2, b'}').map_or(b.len(), |e| e + 2);
            continue;
        }
        if !(b[i] == b'{' && b[i + 1] == b'%') {
            i += 1;
            continue;
        }
        let Some(end) = tag_end(b, i + 2) else { break };
        // In `{%-%}` the one `-` is both the opening and the closing marker: the body is empty.
        let body_start = (i + 2 + usize::from(matches!(b.get(i + 2), Some(b'-' | b'+')))).min(end);
        let body = &source[body_start..end];
        let word = first_word(body);
        if word == "raw" {
            // Skip to the end of the raw block untouched.
            i = find_endraw(b, end).unwrap_or(b.len());
            continue;
        }
        if word == "for" {
            if let Some((from, to)) = iter_span(body) {
                let (from, to) = (body_start + from, body_start + to);
                out.push_str(&source[copied..from]);
                out.push('(');
                out.push_str(&source[from..to]);
                out.push_str(")|");
                out.push_str(FILTER);
                copied = to;
            }
        }
        i = end;
    }
    out.push_str(&source[copied..]);
    out
}

fn find(b: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    b.get(from..)?
        .windows(pat.len())
        .position(|w| w == pat)
        .map(|p| from + p)
}

fn find_endraw(b: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    loop {
        let s = find(b, i, b"{%")?;
        let end = tag_end(b, s + 2)?;
        let body_start = s + 2 + usize::from(matches!(b.get(s + 2), Some(b'-' | b'+')));
        let body = std::str::from_utf8(&b[body_start..end]).ok()?;
        if first_word(body) == "endraw" {
            return Some(end);
        }
        i = end;
    }
}

/// Index of the `-`/`+`/`%` that closes the tag whose body starts at `from` (skipping `%}`
/// inside string literals), or None.
fn tag_end(b: &[u8], from: usize) -> Option<usize> {
    let i = close(b, from, b'%')?;
    Some(if i > from && matches!(b[i - 1], b'-' | b'+') {
        i - 1
    } else {
        i
    })
}

/// Index of the first `C}` at or after `from` outside string literals.
fn close(b: &[u8], from: usize, c: u8) -> Option<usize> {
    let mut i = from;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => i = skip_string(b, i, q)?,
            x if x == c && b.get(i + 1) == Some(&b'}') => {
                return Some(i);
            }
            _ => i += 1,
        }
    }
    None
}

/// Index just past the string literal opened by the quote at `i`.
fn skip_string(b: &[u8], mut i: usize, q: u8) -> Option<usize> {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            c if c == q => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn first_word(body: &str) -> &str {
    let t = body.trim_start();
    let n = t
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(t.len());
    &t[..n]
}

/// The byte span of the iterable in a `for` tag body: after the first top-level `in`, up to a
/// top-level `if` or `recursive` (jinja2 parses the iterable without conditional expressions,
/// so a top-level `if` always starts the loop filter) or the end, trimmed.
fn iter_span(body: &str) -> Option<(usize, usize)> {
    let b = body.as_bytes();
    let mut depth = 0i32;
    let mut start = None;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => {
                i = skip_string(b, i, q)?;
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            c if depth == 0 && (c.is_ascii_alphabetic() || c == b'_') => {
                let w_end = b[i..]
                    .iter()
                    .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                    .map_or(b.len(), |p| i + p);
                let w = &body[i..w_end];
                match (start, w) {
                    (None, "in") => start = Some(w_end),
                    (Some(s), "if" | "recursive") => return trimmed(body, s, i),
                    _ => {}
                }
                i = w_end;
                continue;
            }
            c if c.is_ascii_digit() => {
                // Skip numbers so `1e5` style suffixes are not read as words.
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                    i += 1;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    trimmed(body, start?, b.len())
}

fn trimmed(body: &str, from: usize, to: usize) -> Option<(usize, usize)> {
    let s = &body[from..to];
    let lead = s.len() - s.trim_start().len();
    let inner = s.trim();
    (!inner.is_empty()).then_some((from + lead, from + lead + inner.len()))
}

#[cfg(test)]
mod tests {
    use super::guard_for_loops as g;

    #[test]
    fn rewrites_iterables_only() {
        assert_eq!(
            g("{%- for t in tools %}x{% endfor %}"),
            "{%- for t in (tools)|__iter_not_none %}x{% endfor %}"
        );
        assert_eq!(
            g("{% for k, v in d.items() if v != 'in %}' recursive -%}"),
            "{% for k, v in (d.items())|__iter_not_none if v != 'in %}' recursive -%}"
        );
        assert_eq!(
            g("{% for m in (a if b else c)[1:] %}"),
            "{% for m in ((a if b else c)[1:])|__iter_not_none %}"
        );
        let expr = "{{ '{% for a in b %}' }}";
        assert_eq!(g(expr), expr);
        let raw = "{% raw %}{% for a in b %}{% endraw %}{# {% for a in b %} #}";
        assert_eq!(g(raw), raw);
        assert_eq!(g("{% for a in %}"), "{% for a in %}");
        assert_eq!(g("{% if x %}{{ y }}"), "{% if x %}{{ y }}");
        // One `-` that opens and closes the tag (found by the template fuzz target).
        assert_eq!(g("{%-%}"), "{%-%}");
        assert_eq!(g("a{%+%}b"), "a{%+%}b");
    }

    #[test]
    fn none_raises_undefined_is_empty() {
        let render = |t: &str| {
            crate::chat::render_chat_template(t, &serde_json::json!([]), &Default::default())
        };
        assert!(render("{% for t in tools %}x{% endfor %}").is_err());
        assert_eq!(
            render("{% for t in nothing %}x{% endfor %}y").as_deref(),
            Ok("y")
        );
        assert_eq!(
            render("{% for c in 'ab' %}{{ c }}{% endfor %}").as_deref(),
            Ok("ab")
        );
    }
}
