//! Chat-template rendering as Hugging Face `transformers`' `apply_chat_template` does it, with
//! minijinja configured like its jinja2 environment: `trim_blocks`, `lstrip_blocks`, loop
//! controls, `raise_exception`, `strftime_now`, `tojson` as Python's `json.dumps(ensure_ascii=
//! False)`, Python's `str()` when printing values (`True`, `None`, list and dict reprs), Python
//! string/dict methods (minijinja-contrib's pycompat), and the `{% generation %}` tag (its body
//! renders unchanged). `tools` and `documents` are none when absent, as transformers passes them.
//! Two jinja2 behaviours are source rewrites: `for` over none raises (`chat/none_iter.rs`), and
//! `|safe + str` escapes the str as markupsafe does (`chat/markup_add.rs`).

//!
//! Templates come from files, so a render is bounded (`chat/limits.rs`): fuel, recursion,
//! output and value sizes, each failing with a one-line error that names the limit.

pub mod limits;
mod markup_add;
mod none_iter;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::rc::Rc;
use std::sync::Arc;

use minijinja::machinery::{CompiledTemplate, Instructions, TemplateConfig, Vm, WhitespaceConfig};
use minijinja::syntax::SyntaxConfig;
use minijinja::value::{Kwargs, ValueKind};
use minijinja::{AutoEscape, Environment, Error, ErrorKind, Value};

/// What a render gets besides the messages.
#[derive(Debug, Clone, Default)]
pub struct ChatOptions {
    /// The `tools` list (none when absent).
    pub tools: Option<serde_json::Value>,
    /// `add_generation_prompt`.
    pub add_generation_prompt: bool,
    /// Extra variables (e.g. `enable_thinking`), set last so they override.
    pub variables: serde_json::Map<String, serde_json::Value>,
    /// `bos_token` / `eos_token` (from the file's vocabulary; empty when absent).
    pub bos_token: String,
    pub eos_token: String,
    /// Unix time `strftime_now` uses (default: now).
    pub now: Option<i64>,
}

/// The text of the token a `tokenizer.ggml.*_token_id` key names (empty when absent), for
/// `bos_token` / `eos_token`.
pub fn token_text_for(file: &crate::GgufFile, key: &str) -> String {
    let Some(id) = file.get(key).and_then(|v| v.as_u64()) else {
        return String::new();
    };
    let Some(tokens) = file.get("tokenizer.ggml.tokens") else {
        return String::new();
    };
    match tokens
        .as_array()
        .and_then(|a| a.get(usize::try_from(id).ok()?))
    {
        Some(crate::Value::String(s)) => s.to_string_lossy().into_owned(),
        _ => String::new(),
    }
}

/// The file's own template, `tokenizer.chat_template`.
pub fn file_template(file: &crate::GgufFile) -> Option<String> {
    file.get("tokenizer.chat_template")
        .and_then(|v| v.as_str().map(|s| s.into_owned()))
}

/// A template compiled with the checks in, and the environment it runs in.
struct Compiled {
    // Declared before `_source`, so dropped before it: they borrow its text.
    instructions: Instructions<'static>,
    blocks: BTreeMap<&'static str, Instructions<'static>>,
    env: Environment<'static>,
    /// The rewritten source the instructions point into (heap text that never moves).
    _source: Box<str>,
}

impl Compiled {
    fn new(source: &str) -> crate::Result<Compiled> {
        let owned: Box<str> = rewrite(source).into_boxed_str();
        // SAFETY: the text lives on the heap as long as `_source`, which is never changed and
        // is dropped after every field that borrows it; no `'static` borrow leaves this struct
        // (minijinja's errors own their text).
        let text: &'static str = unsafe { &*(&*owned as *const str) };
        // SyntaxConfig is a unit struct only without minijinja's `custom_syntax` feature.
        #[allow(clippy::default_constructed_unit_structs)]
        let config = TemplateConfig {
            syntax_config: SyntaxConfig::default(),
            ws_config: WhitespaceConfig {
                keep_trailing_newline: false,
                lstrip_blocks: true,
                trim_blocks: true,
            },
            default_auto_escape: Arc::new(|_: &str| AutoEscape::None),
        };
        // Compiled here, not added to the environment: the instructions get the checks first.
        let compiled =
            CompiledTemplate::new("chat_template", text, &config).map_err(|e| refused(&e))?;
        let instructions = limits::bound(&compiled.instructions).map_err(|e| refused(&e))?;
        let mut blocks = BTreeMap::new();
        for (name, block) in &compiled.blocks {
            blocks.insert(*name, limits::bound(block).map_err(|e| refused(&e))?);
        }
        Ok(Compiled {
            instructions,
            blocks,
            env: environment(),
            _source: owned,
        })
    }
}

/// A compiled template, or the one-line error compiling it gave.
type Cached = Rc<crate::Result<Compiled>>;

thread_local! {
    /// The last template compiled (source → its compiled form or one-line error): a live
    /// editor or a conversation re-renders the same text, which then is not rewritten and
    /// compiled again.
    static COMPILED: RefCell<Option<(String, Cached)>> =
        const { RefCell::new(None) };
    /// The time `strftime_now` gives during the current render (set by each render).
    static NOW: Cell<i64> = const { Cell::new(0) };
}

/// Renders `source` over `messages`; Err is a one-line message (raise_exception's text, an
/// undefined name, a syntax error, a limit of `chat/limits.rs`, ...).
pub fn render_chat_template(
    source: &str,
    messages: &serde_json::Value,
    opts: &ChatOptions,
) -> crate::Result<String> {
    let compiled = COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        match &*c {
            Some((s, compiled)) if s == source => compiled.clone(),
            _ => {
                let compiled = Rc::new(Compiled::new(source));
                *c = Some((source.to_string(), compiled.clone()));
                compiled
            }
        }
    });
    let compiled = compiled.as_ref().as_ref().map_err(|e| e.clone())?;
    NOW.with(|n| n.set(opts.now.unwrap_or_else(unix_now)));
    let mut ctx = serde_json::Map::new();
    ctx.insert("messages".into(), messages.clone());
    ctx.insert(
        "tools".into(),
        opts.tools.clone().unwrap_or(serde_json::Value::Null),
    );
    ctx.insert("documents".into(), serde_json::Value::Null);
    ctx.insert(
        "add_generation_prompt".into(),
        serde_json::Value::Bool(opts.add_generation_prompt),
    );
    ctx.insert("bos_token".into(), opts.bos_token.clone().into());
    ctx.insert("eos_token".into(), opts.eos_token.clone().into());
    for (k, v) in &opts.variables {
        ctx.insert(k.clone(), v.clone());
    }
    let ctx = serde_json::Value::Object(ctx);
    limits::start(json_size(&ctx));
    let mut out = String::new();
    Vm::new(&compiled.env)
        .eval(
            &compiled.instructions,
            Value::from_serialize(&ctx),
            &compiled.blocks,
            &mut minijinja::machinery::make_string_output(&mut out),
            AutoEscape::None,
        )
        .map_err(|e| refused(&e))?;
    Ok(out)
}

/// The bytes of `v` as compact JSON, counted without building it.
fn json_size(v: &serde_json::Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// The source rewrites of jinja2 behaviours (module docs).
fn rewrite(source: &str) -> String {
    markup_add::rewrite_adds(&none_iter::guard_for_loops(&generation_tags_to_plain(
        source,
    )))
}

/// The environment configured as transformers', with the limits.
fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_fuel(Some(limits::FUEL));
    env.set_recursion_limit(limits::RECURSION);
    limits::add_helpers(&mut env);
    env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
    env.set_formatter(|out, _state, value| {
        let s = py_str_within(value, limits::room())?;
        limits::write(s.len())?;
        out.write_str(&s).map_err(Error::from)
    });
    env.add_function("raise_exception", |msg: String| -> Result<Value, Error> {
        Err(Error::new(ErrorKind::InvalidOperation, msg))
    });
    env.add_function("strftime_now", |fmt: String| {
        strftime(&fmt, NOW.with(|n| n.get()))
    });
    env.add_filter("tojson", tojson);
    // jinja2's str(): True, None, Python reprs of lists and dicts.
    env.add_filter("string", |v: Value| {
        py_str_within(&v, limits::value_bytes())
    });
    // jinja2's map gives a generator (tojson refuses it; |list makes a list).
    env.add_filter(
        "map",
        |state: &minijinja::State, value: Value, args: minijinja::value::Rest<Value>| {
            let items = minijinja::filters::map(state, value, args)?;
            Ok::<Value, Error>(Value::make_one_shot_iterator(items.into_iter()))
        },
    );
    // jinja2: None is not iterable (minijinja iterates it as empty).
    env.add_test("iterable", |v: Value| {
        !matches!(v.kind(), ValueKind::None | ValueKind::Undefined) && v.try_iter().is_ok()
    });
    env.add_filter(none_iter::FILTER, |v: Value| -> Result<Value, Error> {
        if v.is_none() {
            return Err(Error::new(
                ErrorKind::InvalidOperation,
                "TypeError: 'NoneType' object is not iterable",
            ));
        }
        Ok(v)
    });
    env.add_function(markup_add::FUNCTION, markup_add::py_add);
    env
}

/// A template that does not compile or render, as the library's error (its one-line message).
fn refused(e: &Error) -> crate::Error {
    crate::Error::new(crate::ErrorKind::ChatTemplate {
        message: one_line(e),
    })
}

fn one_line(e: &Error) -> String {
    if e.kind() == ErrorKind::OutOfFuel {
        return format!(
            "chat template: ran more than {} instructions (fuel limit)",
            limits::FUEL
        );
    }
    if e.detail() == Some("recursion limit exceeded") {
        return format!(
            "chat template: nests deeper than {} levels (recursion limit)",
            limits::RECURSION
        );
    }
    let msg = match e.detail() {
        Some(d) if e.kind() == ErrorKind::InvalidOperation => d.to_string(),
        _ => e.to_string(),
    };
    msg.replace('\n', " ")
}

/// `{% generation %}` / `{% endgeneration %}` become a block that renders its body, keeping
/// the tags' whitespace control.
fn generation_tags_to_plain(source: &str) -> String {
    let re = regex::Regex::new(r"\{%(-?)\s*(end)?generation\s*(-?)%\}").expect("static regex");
    re.replace_all(source, |c: &regex::Captures| {
        let kw = if c.get(2).is_some() {
            "endif"
        } else {
            "if true"
        };
        format!("{{%{} {kw} {}%}}", &c[1], &c[3])
    })
    .into_owned()
}

/// Python's `str(value)`, or an error naming the limit once it passes `cap` bytes (a list
/// can hold the same large string many times).
fn py_str_within(v: &Value, cap: usize) -> Result<String, Error> {
    let mut s = String::new();
    py_str(&mut s, v, cap);
    if s.len() > cap {
        return Err(limits::output_error(cap));
    }
    Ok(s)
}

/// Python's `str(value)`, stopping soon after `cap` bytes.
fn py_str(out: &mut String, v: &Value, cap: usize) {
    match v.kind() {
        ValueKind::Undefined => {}
        ValueKind::String => out.push_str(v.as_str().unwrap_or_default()),
        _ => py_repr(out, v, cap),
    }
}

/// Python's `repr(value)` for the JSON-like values templates see.
fn py_repr(out: &mut String, v: &Value, cap: usize) {
    match v.kind() {
        ValueKind::Undefined | ValueKind::None => out.push_str("None"),
        ValueKind::Bool => out.push_str(if v.is_true() { "True" } else { "False" }),
        ValueKind::String => {
            let s = v.as_str().unwrap_or_default();
            let q = if s.contains('\'') && !s.contains('"') {
                '"'
            } else {
                '\''
            };
            out.push(q);
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c == q => {
                        out.push('\\');
                        out.push(c);
                    }
                    c if (c as u32) < 0x20 || c as u32 == 0x7F => {
                        let _ = write!(out, "\\x{:02x}", c as u32);
                    }
                    c => out.push(c),
                }
            }
            out.push(q);
        }
        ValueKind::Seq | ValueKind::Iterable => {
            out.push('[');
            if let Ok(items) = v.try_iter() {
                for (i, item) in items.enumerate() {
                    if out.len() > cap {
                        return;
                    }
                    if i > 0 {
                        out.push_str(", ");
                    }
                    py_repr(out, &item, cap);
                }
            }
            out.push(']');
        }
        ValueKind::Map => {
            out.push('{');
            if let Ok(keys) = v.try_iter() {
                for (i, k) in keys.enumerate() {
                    if out.len() > cap {
                        return;
                    }
                    if i > 0 {
                        out.push_str(", ");
                    }
                    py_repr(out, &k, cap);
                    out.push_str(": ");
                    py_repr(out, &v.get_item(&k).unwrap_or_default(), cap);
                }
            }
            out.push('}');
        }
        _ => {
            let _ = write!(out, "{v}");
        }
    }
}

/// transformers' `tojson`: `json.dumps(x, ensure_ascii=False, indent=indent,
/// separators=separators, sort_keys=sort_keys)`.
fn tojson(value: Value, kwargs: Kwargs) -> Result<Value, Error> {
    let indent: Option<Value> = kwargs.get("indent")?;
    let sort_keys: Option<bool> = kwargs.get("sort_keys")?;
    let separators: Option<Value> = kwargs.get("separators")?;
    let _: Option<bool> = kwargs.get("ensure_ascii")?;
    kwargs.assert_all_used()?;
    let indent = match indent {
        Some(v) if v.kind() == ValueKind::Number => {
            let n = usize::try_from(i64::try_from(v).unwrap_or(0).max(0)).unwrap_or(usize::MAX);
            if n > limits::value_bytes() {
                return Err(limits::output_error(limits::value_bytes()));
            }
            Some(" ".repeat(n))
        }
        Some(v) if v.kind() == ValueKind::String => Some(v.as_str().unwrap_or("").to_string()),
        _ => None,
    };
    let (item_sep, key_sep) = match separators {
        Some(s) if s.len() == Some(2) => (
            s.get_item(&Value::from(0))?.to_string(),
            s.get_item(&Value::from(1))?.to_string(),
        ),
        _ => (
            if indent.is_some() { "," } else { ", " }.to_string(),
            ": ".to_string(),
        ),
    };
    let mut out = String::new();
    let fmt = JsonFmt {
        indent,
        item_sep,
        key_sep,
        sort_keys: sort_keys.unwrap_or(false),
    };
    fmt.write(&mut out, &value, 0)?;
    Ok(Value::from(out))
}

struct JsonFmt {
    indent: Option<String>,
    item_sep: String,
    key_sep: String,
    sort_keys: bool,
}

impl JsonFmt {
    fn newline(&self, out: &mut String, depth: usize) {
        if let Some(ind) = &self.indent {
            out.push('\n');
            for _ in 0..depth {
                out.push_str(ind);
            }
        }
    }

    fn write(&self, out: &mut String, v: &Value, depth: usize) -> Result<(), Error> {
        // Shared values print in full each time: stop at the size limit.
        if out.len() > limits::value_bytes() {
            return Err(limits::output_error(limits::value_bytes()));
        }
        match v.kind() {
            ValueKind::Undefined | ValueKind::None => out.push_str("null"),
            ValueKind::Bool => out.push_str(if v.is_true() { "true" } else { "false" }),
            ValueKind::Number => {
                let _ = write!(out, "{v}");
            }
            ValueKind::String => json_string(out, v.as_str().unwrap_or_default()),
            ValueKind::Seq => {
                let items: Vec<Value> = v.try_iter()?.collect();
                if items.is_empty() {
                    out.push_str("[]");
                    return Ok(());
                }
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&self.item_sep);
                    }
                    self.newline(out, depth + 1);
                    self.write(out, item, depth + 1)?;
                }
                self.newline(out, depth);
                out.push(']');
            }
            ValueKind::Map => {
                let mut keys: Vec<Value> = v.try_iter()?.collect();
                if keys.is_empty() {
                    out.push_str("{}");
                    return Ok(());
                }
                if self.sort_keys {
                    keys.sort();
                }
                out.push('{');
                for (i, k) in keys.iter().enumerate() {
                    if i > 0 {
                        out.push_str(&self.item_sep);
                    }
                    self.newline(out, depth + 1);
                    let ks = match k.as_str() {
                        Some(s) => s.to_string(),
                        None => k.to_string(),
                    };
                    json_string(out, &ks);
                    out.push_str(&self.key_sep);
                    self.write(out, &v.get_item(k)?, depth + 1)?;
                }
                self.newline(out, depth);
                out.push('}');
            }
            ValueKind::Iterable => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    "Object of type generator is not JSON serializable",
                ))
            }
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidOperation,
                    format!("Object of type {} is not JSON serializable", v.kind()),
                ))
            }
        }
        Ok(())
    }
}

fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0C}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn unix_now() -> i64 {
    #[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
    {
        (js_sys::Date::now() / 1000.0) as i64
    }
    #[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
    {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)
    }
}

/// Python's `datetime.strftime` for the codes templates use, in UTC.
fn strftime(fmt: &str, t: i64) -> String {
    const MONTHS: [&str; 12] = [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ];
    const DAYS: [&str; 7] = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
    let days = t.div_euclid(86400);
    let secs = t.rem_euclid(86400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z.rem_euclid(146097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let weekday = (days + 3).rem_euclid(7) as usize; // 1970-01-01 was a Thursday
    let (hh, mm, ss) = (secs / 3600, secs / 60 % 60, secs % 60);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let cum = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let yday = cum[(m - 1) as usize] + d + i64::from(leap && m > 2);
    let mut out = String::new();
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => {
                let _ = write!(out, "{d:02}");
            }
            Some('-') => match chars.next() {
                Some('d') => {
                    let _ = write!(out, "{d}");
                }
                Some('m') => {
                    let _ = write!(out, "{m}");
                }
                Some(o) => {
                    out.push_str("%-");
                    out.push(o);
                }
                None => out.push_str("%-"),
            },
            Some('m') => {
                let _ = write!(out, "{m:02}");
            }
            Some('Y') => {
                let _ = write!(out, "{y}");
            }
            Some('y') => {
                let _ = write!(out, "{:02}", y % 100);
            }
            Some('B') => out.push_str(MONTHS[(m - 1) as usize]),
            Some('b') => out.push_str(&MONTHS[(m - 1) as usize][..3]),
            Some('A') => out.push_str(DAYS[weekday]),
            Some('a') => out.push_str(&DAYS[weekday][..3]),
            Some('H') => {
                let _ = write!(out, "{hh:02}");
            }
            Some('M') => {
                let _ = write!(out, "{mm:02}");
            }
            Some('S') => {
                let _ = write!(out, "{ss:02}");
            }
            Some('j') => {
                let _ = write!(out, "{yday:03}");
            }
            Some('%') => out.push('%'),
            Some(o) => {
                out.push('%');
                out.push(o);
            }
            None => out.push('%'),
        }
    }
    out
}
