//! What reaches the terminal from a file is shown, never obeyed: control characters (C0, DEL,
//! C1), the bidirectional controls (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069) and the
//! line and paragraph separators (U+2028/9) become escapes as `{:?}` writes them (`\u{1b}`,
//! `\n`, `\t`, `\r`, `\0`); every other character, printable Unicode included, is kept.
//! JSON output escapes the same characters as `\uXXXX` (serde escapes only C0), which is the
//! same JSON value.

use std::borrow::Cow;

/// Whether `c` is escaped (see the module doc).
fn escaped(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
                | '\u{2028}' | '\u{2029}'
        )
}

fn escape_with(
    s: &str,
    keep: impl Fn(char) -> bool,
    out: impl Fn(char, &mut String),
) -> Cow<'_, str> {
    if !s.chars().any(|c| escaped(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut text = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if escaped(c) && !keep(c) {
            out(c, &mut text);
        } else {
            text.push(c);
        }
    }
    Cow::Owned(text)
}

fn debug_escape(c: char, text: &mut String) {
    match c {
        '\n' => text.push_str("\\n"),
        '\t' => text.push_str("\\t"),
        '\r' => text.push_str("\\r"),
        '\0' => text.push_str("\\0"),
        c => text.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

/// A string from a file (a key, a tensor name, a value, a file name, an error message) as one
/// piece of a line: every escaped character escaped, newlines and tabs too.
pub fn shown(s: &str) -> Cow<'_, str> {
    escape_with(s, |_| false, debug_escape)
}

/// A whole text document laid out by the CLI: as [`shown`], but its own newlines and tabs stay.
pub fn lines(s: &str) -> Cow<'_, str> {
    escape_with(s, |c| c == '\n' || c == '\t', debug_escape)
}

/// Serialized JSON: the characters serde leaves raw, as `\uXXXX` (inside a string, the only
/// place they can be, that is the same value).
pub fn json(s: &str) -> Cow<'_, str> {
    escape_with(
        s,
        |c| c == '\n',
        |c, text| {
            // Every escaped character outside C0 is in the Basic Multilingual Plane.
            text.push_str(&format!("\\u{:04x}", c as u32));
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_escaped_and_printable_unicode_kept() {
        assert_eq!(shown("a\u{1b}[31mb"), "a\\u{1b}[31mb");
        assert_eq!(
            shown("x\ny\t\u{7f}\u{9b}\u{202e}\u{2066}"),
            "x\\ny\\t\\u{7f}\\u{9b}\\u{202e}\\u{2066}"
        );
        assert_eq!(shown("blk.0 é 日本 🦙"), "blk.0 é 日本 🦙");
        assert!(matches!(shown("plain"), Cow::Borrowed(_)));
        assert_eq!(lines("a\u{1b}\n\tb\r"), "a\\u{1b}\n\tb\\r");
    }

    #[test]
    fn json_escapes_stay_the_same_value() {
        let doc = serde_json::json!({"k\u{1b}": "v\u{9b}\u{7f}\u{202e}é"}).to_string();
        let escaped = json(&doc);
        assert!(
            !escaped.contains(['\u{1b}', '\u{9b}', '\u{7f}', '\u{202e}']),
            "{escaped}"
        );
        let back: serde_json::Value = serde_json::from_str(&escaped).unwrap();
        assert_eq!(
            back,
            serde_json::from_str::<serde_json::Value>(&doc).unwrap()
        );
    }
}
