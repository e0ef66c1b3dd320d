//! Bounds on what a chat template (file content, so untrusted) may do while it renders:
//! minijinja's fuel (instructions run) and recursion depth, plus what fuel does not see, the
//! size of what one instruction makes. `{% set s = s ~ s %}` costs a few instructions and
//! doubles `s`, so the compiled instructions are rewritten: every write (captures and macro
//! bodies included) is counted against the output limit; `~`, `+`, `*` and the filters and
//! methods whose result can outgrow their input by more than a constant factor (`join`,
//! `replace`, `format`, `indent`, `batch`, `slice`, `sum`, `chain`, `pprint`) check the size
//! they would make before they make it; every call, filter and operator result is checked
//! after. The helper names contain `:`, which no template can name or shadow.

use std::cell::Cell;

use minijinja::machinery::{Instruction, Instructions};
use minijinja::value::{Rest, ValueKind};
use minijinja::{Error, ErrorKind, Value};

/// Instructions one render may run (minijinja's fuel; most run one unit). Real templates
/// over a long conversation use well under a million. Fuzz builds (`cfg(fuzzing)`, set by
/// cargo-fuzz) run instrumented code many times slower, so there a runaway loop meets a
/// smaller budget within libFuzzer's timeout.
pub const FUEL: u64 = if cfg!(fuzzing) { 1_000_000 } else { 20_000_000 };
/// minijinja's recursion depth (a loop or `if` is one level, a macro call several).
pub const RECURSION: usize = 200;
/// Bytes one render may write, captures (`{% set %}` blocks, macro bodies) included, and
/// the largest string one instruction may make; raised to 4× the input when that is larger.
pub const OUTPUT_BYTES: usize = 8 << 20;
/// Items in the largest list or map one instruction may make; raised to the input's size
/// in bytes when that is larger.
pub const ITEMS: usize = 1 << 20;
/// Values measured by the size checks in one render (each item walked is one unit).
pub const WORK: u64 = 100_000_000;

/// The limits of one render and what it has used.
#[derive(Clone, Copy)]
struct Budget {
    bytes: usize,
    items: usize,
    written: usize,
    work: u64,
}

thread_local! {
    static BUDGET: Cell<Budget> = const {
        Cell::new(Budget { bytes: OUTPUT_BYTES, items: ITEMS, written: 0, work: 0 })
    };
}

/// The output and item limits of a render over `input_bytes` of messages and variables.
pub fn limits_for(input_bytes: usize) -> (usize, usize) {
    (
        OUTPUT_BYTES.max(input_bytes.saturating_mul(4)),
        ITEMS.max(input_bytes),
    )
}

/// Starts the count of a render.
pub fn start(input_bytes: usize) {
    let (bytes, items) = limits_for(input_bytes);
    BUDGET.with(|b| {
        b.set(Budget {
            bytes,
            items,
            written: 0,
            work: 0,
        })
    });
}

fn limit_error(msg: String) -> Error {
    Error::new(ErrorKind::InvalidOperation, format!("chat template: {msg}"))
}

fn bytes_limit() -> usize {
    BUDGET.with(|b| b.get().bytes)
}

/// The largest string one instruction may make in this render.
pub fn value_bytes() -> usize {
    bytes_limit()
}

/// The error for output (or a printed value) past `limit` bytes.
pub fn output_error(limit: usize) -> Error {
    limit_error(format!("wrote more than {limit} bytes (output limit)"))
}

/// Counts `n` bytes written; an error past the output limit.
pub fn write(n: usize) -> Result<(), Error> {
    BUDGET.with(|b| {
        let mut v = b.get();
        v.written = v.written.saturating_add(n);
        b.set(v);
        if v.written > v.bytes {
            Err(output_error(v.bytes))
        } else {
            Ok(())
        }
    })
}

/// The room left for writing (what a formatter may build before its write is refused).
pub fn room() -> usize {
    BUDGET.with(|b| {
        let v = b.get();
        v.bytes.saturating_sub(v.written)
    })
}

fn charge(units: u64) -> Result<(), Error> {
    BUDGET.with(|b| {
        let mut v = b.get();
        v.work = v.work.saturating_add(units);
        b.set(v);
        if v.work > WORK {
            Err(limit_error(format!(
                "measured more than {WORK} values (work limit)"
            )))
        } else {
            Ok(())
        }
    })
}

fn too_large(what: &str, size: u128) -> Error {
    let (bytes, items) = BUDGET.with(|b| (b.get().bytes, b.get().items));
    if what == "items" {
        limit_error(format!(
            "would make a list of {size} items, more than {items} (item limit)"
        ))
    } else {
        limit_error(format!(
            "would make a string of {size} bytes, more than {bytes} (value size limit)"
        ))
    }
}

fn check_bytes(size: u128) -> Result<(), Error> {
    if size > bytes_limit() as u128 {
        return Err(too_large("bytes", size));
    }
    Ok(())
}

fn check_items(count: u128) -> Result<(), Error> {
    if count > BUDGET.with(|b| b.get().items) as u128 {
        return Err(too_large("items", count));
    }
    Ok(())
}

/// An upper bound of the bytes `value` prints as (minijinja's `Display`, Python's `str`
/// or JSON), walking at most until it passes `cap`; items are charged to the work limit.
pub fn printed_size(v: &Value, cap: u128) -> Result<u128, Error> {
    let mut size = 0u128;
    walk(v, cap, &mut size, 0)?;
    Ok(size)
}

fn walk(v: &Value, cap: u128, size: &mut u128, depth: u32) -> Result<(), Error> {
    charge(1)?;
    // Indentation of pretty printers grows with depth.
    *size += 2 + u128::from(depth) * 4;
    match v.kind() {
        ValueKind::String => *size += v.as_str().map_or(0, str::len) as u128 * 6 / 5 + 2,
        // A sized iterable (a lazy `a + b`, `l * n`) iterates again; an unsized one may be
        // one-shot (walking would consume it), so its items are not walked.
        ValueKind::Iterable if v.len().is_none() => *size += 24,
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable => {
            let Ok(iter) = v.try_iter() else {
                return Ok(());
            };
            for item in iter {
                if *size > cap {
                    return Ok(());
                }
                if v.kind() == ValueKind::Map {
                    walk(&item, cap, size, depth + 1)?;
                    let val = v.get_item(&item).unwrap_or_default();
                    walk(&val, cap, size, depth + 1)?;
                } else {
                    walk(&item, cap, size, depth + 1)?;
                }
            }
        }
        _ => *size += 24,
    }
    Ok(())
}

fn len_of(v: &Value) -> u128 {
    match v.kind() {
        ValueKind::String => v.as_str().map_or(0, str::len) as u128,
        _ => v.len().unwrap_or(0) as u128,
    }
}

/// After a call, filter or operator: its value is within the limits.
fn post(v: Value) -> Result<Value, Error> {
    match v.kind() {
        ValueKind::String => check_bytes(len_of(&v))?,
        ValueKind::Seq | ValueKind::Map | ValueKind::Iterable => check_items(len_of(&v))?,
        _ => {}
    }
    Ok(v)
}

/// The arguments back for the instruction that follows (`UnpackList` pushes them in order).
fn pass(args: Vec<Value>) -> Result<Value, Error> {
    Ok(Value::from(args.into_iter().rev().collect::<Vec<_>>()))
}

fn is_seq(v: &Value) -> bool {
    matches!(v.kind(), ValueKind::Seq | ValueKind::Iterable)
}

fn pre_concat(args: Rest<Value>) -> Result<Value, Error> {
    let cap = bytes_limit() as u128;
    let mut total = 0;
    for a in args.iter() {
        total += printed_size(a, cap)?;
    }
    check_bytes(total)?;
    pass(args.0)
}

fn pre_add(args: Rest<Value>) -> Result<Value, Error> {
    if let [a, b] = &args[..] {
        if a.kind() == ValueKind::String && b.kind() == ValueKind::String {
            check_bytes(len_of(a) + len_of(b))?;
        } else if is_seq(a) && is_seq(b) {
            check_items(len_of(a) + len_of(b))?;
        }
    }
    pass(args.0)
}

fn pre_mul(args: Rest<Value>) -> Result<Value, Error> {
    if let [a, b] = &args[..] {
        let (v, n) = if b.kind() == ValueKind::Number {
            (a, b)
        } else {
            (b, a)
        };
        if let Some(n) = n.as_usize() {
            let n = n as u128;
            match v.kind() {
                ValueKind::String => check_bytes(len_of(v) * n)?,
                ValueKind::Seq | ValueKind::Iterable => check_items(len_of(v) * n)?,
                _ => {}
            }
        }
    }
    pass(args.0)
}

/// `value|join(d)` and `d.join(value)`.
fn join_size(items: &Value, joiner: Option<&Value>) -> Result<(), Error> {
    let cap = bytes_limit() as u128;
    let sep = joiner.map_or(0, len_of);
    let n = len_of(items);
    check_bytes(sep * n)?;
    check_bytes(printed_size(items, cap)? + sep * n)
}

/// `s|replace(old, new[, count])` and `s.replace(old, new[, count])`.
fn replace_size(args: &[Value]) -> Result<(), Error> {
    let (Some(s), Some(old), Some(new)) = (
        args.first().and_then(Value::as_str),
        args.get(1).and_then(Value::as_str),
        args.get(2),
    ) else {
        return Ok(());
    };
    let mut n = if old.is_empty() {
        s.chars().count() as u128 + 1
    } else {
        s.matches(old).count() as u128
    };
    if let Some(count) = args.get(3).and_then(Value::as_usize) {
        n = n.min(count as u128);
    }
    let new_len = match new.as_str() {
        Some(t) => t.len() as u128,
        None => printed_size(new, bytes_limit() as u128)?,
    };
    let s_len = s.len() as u128;
    check_bytes(s_len.saturating_sub(n * old.len() as u128) + n * new_len)
}

/// printf and `str.format` widths and precisions are digit runs in the format string; one
/// over the size limit would pad to that size. `*` takes the width from an argument.
fn format_size(fmt: &Value, args: &[Value]) -> Result<(), Error> {
    let Some(f) = fmt.as_str() else { return Ok(()) };
    let limit = bytes_limit() as u128;
    let mut run = 0u128;
    for c in f.chars().chain(std::iter::once(' ')) {
        match c.to_digit(10) {
            Some(d) => run = (run * 10 + u128::from(d)).min(u128::MAX / 20),
            None => {
                check_bytes(run)?;
                run = 0;
            }
        }
    }
    if f.contains('*') {
        for a in args {
            if a.kind() == ValueKind::Number {
                check_bytes(a.as_usize().map_or(limit + 1, |n| n as u128))?;
            }
        }
    }
    let cap = limit;
    let mut total = len_of(fmt);
    for a in args {
        total += printed_size(a, cap)?;
    }
    check_bytes(total)
}

fn pre_filter(name: &str, args: &[Value]) -> Result<(), Error> {
    match name {
        "join" => join_size(&args[0], args.get(1)),
        "replace" => replace_size(args),
        "format" => format_size(&args[0], &args[1..]),
        "indent" => {
            let lines = args[0].as_str().map_or(0, |s| s.matches('\n').count()) as u128;
            let width = match args.get(1) {
                Some(w) if w.kind() == ValueKind::String => len_of(w),
                Some(w) => w.as_usize().map_or(u128::MAX / 4, |n| n as u128),
                None => 4,
            };
            check_bytes(len_of(&args[0]) + (lines + 1) * width)
        }
        "batch" | "slice" => {
            let n = args
                .get(1)
                .map_or(0, |n| n.as_usize().map_or(u128::MAX, |n| n as u128));
            check_items(n.saturating_add(len_of(&args[0])))
        }
        "chain" => check_items(args.iter().map(len_of).sum()),
        "sum" => {
            let Ok(iter) = args[0].try_iter() else {
                return Ok(());
            };
            let (mut items, mut bytes) = (0u128, 0u128);
            for v in iter {
                charge(1)?;
                match v.kind() {
                    ValueKind::String => bytes += len_of(&v),
                    ValueKind::Seq | ValueKind::Iterable => items += len_of(&v),
                    _ => {}
                }
                check_items(items)?;
                check_bytes(bytes)?;
            }
            Ok(())
        }
        "pprint" => check_bytes(printed_size(&args[0], bytes_limit() as u128)? * 2),
        _ => Ok(()),
    }
}

/// Filters and methods checked before they run.
const PRE_FILTERS: [(&str, &str); 9] = [
    ("join", "gguf-lens:pre-filter:join"),
    ("replace", "gguf-lens:pre-filter:replace"),
    ("format", "gguf-lens:pre-filter:format"),
    ("indent", "gguf-lens:pre-filter:indent"),
    ("batch", "gguf-lens:pre-filter:batch"),
    ("slice", "gguf-lens:pre-filter:slice"),
    ("chain", "gguf-lens:pre-filter:chain"),
    ("sum", "gguf-lens:pre-filter:sum"),
    ("pprint", "gguf-lens:pre-filter:pprint"),
];
const PRE_METHODS: [(&str, &str); 3] = [
    ("join", "gguf-lens:pre-method:join"),
    ("replace", "gguf-lens:pre-method:replace"),
    ("format", "gguf-lens:pre-method:format"),
];

const POST: &str = "gguf-lens:post";
const WRITE: &str = "gguf-lens:write";
const PRE_CONCAT: &str = "gguf-lens:pre-concat";
const PRE_ADD: &str = "gguf-lens:pre-add";
const PRE_MUL: &str = "gguf-lens:pre-mul";

/// Registers the helpers the rewritten instructions call.
pub fn add_helpers(env: &mut minijinja::Environment<'_>) {
    env.add_function(POST, post);
    env.add_function(WRITE, |n: usize| write(n).map(|()| Value::UNDEFINED));
    env.add_function(PRE_CONCAT, pre_concat);
    env.add_function(PRE_ADD, pre_add);
    env.add_function(PRE_MUL, pre_mul);
    for (name, helper) in PRE_FILTERS {
        env.add_function(helper, move |args: Rest<Value>| {
            if !args.is_empty() {
                pre_filter(name, &args)?;
            }
            pass(args.0)
        });
    }
    for (name, helper) in PRE_METHODS {
        env.add_function(helper, move |args: Rest<Value>| {
            match (name, &args[..]) {
                ("join", [sep, items, ..]) => join_size(items, Some(sep))?,
                ("replace", _) => replace_size(&args)?,
                ("format", [fmt, rest @ ..]) => format_size(fmt, rest)?,
                _ => {}
            }
            pass(args.0)
        });
    }
}

/// `ins` with the checks put in: a jump target moves with the instruction it named.
pub fn bound<'s>(ins: &Instructions<'s>) -> Result<Instructions<'s>, Error> {
    let n = ins.len();
    let mut pieces: Vec<Vec<Instruction<'s>>> = Vec::with_capacity(n);
    for i in 0..n {
        let Some(op) = ins.get(i as u32) else { break };
        pieces.push(expand(op)?);
    }
    let mut start = Vec::with_capacity(n + 1);
    let mut at = 0u32;
    for p in &pieces {
        start.push(at);
        at = at
            .checked_add(p.len() as u32)
            .ok_or_else(|| limit_error("too many instructions".into()))?;
    }
    start.push(at);
    let target = |t: &u32| start.get(*t as usize).copied().unwrap_or(at);
    let mut out = Instructions::new(ins.name(), ins.source());
    for (i, piece) in pieces.into_iter().enumerate() {
        let span = ins.get_span(i as u32);
        let line = ins.get_line(i as u32);
        for mut op in piece {
            match &mut op {
                Instruction::Jump(t)
                | Instruction::JumpIfFalse(t)
                | Instruction::JumpIfFalseOrPop(t)
                | Instruction::JumpIfTrueOrPop(t)
                | Instruction::Iterate(t)
                | Instruction::BuildMacro(_, t, _) => *t = target(t),
                _ => {}
            }
            match (span, line) {
                (Some(s), _) => out.add_with_span(op, s),
                (None, Some(l)) => out.add_with_line(op, u16::try_from(l).unwrap_or(u16::MAX)),
                _ => out.add(op),
            };
        }
    }
    Ok(out)
}

fn expand<'s>(op: &Instruction<'s>) -> Result<Vec<Instruction<'s>>, Error> {
    use Instruction as I;
    let checked = |pre: &'static str, op: &Instruction<'s>| {
        vec![
            I::CallFunction(pre, Some(2)),
            I::UnpackList(2),
            op.clone(),
            I::CallFunction(POST, Some(1)),
        ]
    };
    let pre_call = |table: &[(&str, &'static str)], name: &str, argc: &Option<u16>, op| match table
        .iter()
        .find(|(n, _)| *n == name)
    {
        Some((_, helper)) => {
            let Some(argc) = *argc else {
                return Err(limit_error(format!(
                    "{name} with unpacked arguments is not supported (size checks)"
                )));
            };
            Ok(vec![
                I::CallFunction(helper, Some(argc)),
                I::UnpackList(usize::from(argc)),
                op,
                I::CallFunction(POST, Some(1)),
            ])
        }
        None => Ok(vec![op, I::CallFunction(POST, Some(1))]),
    };
    Ok(match op {
        I::EmitRaw(s) => vec![
            I::LoadConst(Value::from(s.len())),
            I::CallFunction(WRITE, Some(1)),
            I::DiscardTop,
            op.clone(),
        ],
        I::StringConcat => checked(PRE_CONCAT, op),
        I::Add => checked(PRE_ADD, op),
        I::Mul => checked(PRE_MUL, op),
        I::ApplyFilter(name, argc, _) => pre_call(&PRE_FILTERS, name, argc, op.clone())?,
        I::CallMethod(name, argc) => pre_call(&PRE_METHODS, name, argc, op.clone())?,
        I::CallFunction(..) | I::CallObject(..) => vec![op.clone(), I::CallFunction(POST, Some(1))],
        _ => vec![op.clone()],
    })
}

#[cfg(test)]
mod tests {
    fn render(t: &str) -> Result<String, String> {
        crate::chat::render_chat_template(t, &serde_json::json!([]), &Default::default())
            .map_err(|e| e.to_string())
    }

    /// Fails with `what` in its one-line message. Fuel is counted in steps, not time, so the
    /// limit is what ends the render: the message says which limit, on any machine.
    fn fails_with(t: &str, what: &str) {
        let err = render(t).expect_err(t);
        assert!(err.contains(what), "{t}: {err}");
        assert!(err.starts_with("chat template: "), "{err}");
        assert!(!err.contains('\n'));
    }

    #[test]
    fn endless_loops_run_out_of_fuel() {
        // 10^10 iterations (the template).
        fails_with(
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
            "(fuel limit)",
        );
        fails_with(
            "{% for i in range(100000) %}{% for j in range(100000) %}{{ '' }}{% endfor %}{% endfor %}",
            "ran more than 20000000 instructions (fuel limit)",
        );
    }

    #[test]
    fn deep_recursion_is_refused() {
        fails_with(
            "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
            "(recursion limit)",
        );
    }

    #[test]
    fn doubling_values_stop_at_the_size_limits() {
        let cases = [
            // 40 doublings of a string by ~, + and a capture, and of a list.
            "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
            "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
            "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s * 2 %}{% endfor %}",
            "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l|length }}",
            "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l * 2 %}{% endfor %}{{ ns.l|list|length }}",
            "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = (ns.l|list + ns.l|list)|list %}{% endfor %}",
            "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l|chain(ns.l)|list %}{% endfor %}",
            // One big string in many slots of a list, then printed, joined or serialised.
            "{% set s = 'x' * 1000000 %}{% set l = [s, s, s, s, s, s, s, s, s, s] %}{% set m = [l, l, l, l, l, l, l, l, l, l] %}{{ m }}",
            "{% set s = 'x' * 1000000 %}{% set l = [s, s, s, s, s, s, s, s, s, s] %}{% set m = [l, l, l, l, l, l, l, l, l, l] %}{{ m ~ '' }}",
            "{% set s = 'x' * 1000000 %}{% set l = [s, s, s, s, s, s, s, s, s, s] %}{{ (l + l)|join }}",
            "{% set s = 'x' * 1000000 %}{% set ns = namespace(l=[s]) %}{% for i in range(20) %}{% set ns.l = ns.l + ns.l %}{% endfor %}{{ ns.l ~ '' }}",
            "{% set s = 'x' * 1000000 %}{% set l = [s, s, s, s, s, s, s, s, s, s] %}{% set m = [l, l, l, l, l, l, l, l, l, l] %}{{ m|tojson }}",
            "{% set s = 'x' * 1000000 %}{% set l = [s, s, s, s, s, s, s, s, s, s] %}{% set m = [l, l, l, l, l, l, l, l, l, l] %}{{ m|string|length }}",
            "{% set s = 'x' * 1000000 %}{% set l = [s, s, s, s, s, s, s, s, s, s] %}{{ ''.join(l) }}",
            // One operation that would make gigabytes.
            "{{ ('a' * 100000)|replace('a', 'a' * 100000) }}",
            "{{ ('a' * 100000).replace('a', 'a' * 100000) }}",
            "{{ '%999999999999s'|format('x') }}",
            "{{ '{:>999999999999}'.format('x') }}",
            "{{ ('a\n' * 100000)|indent(100000) }}",
            "{{ [1]|batch(100000000000, 0)|list }}",
            "{{ {'a': 1}|tojson(indent=100000000000) }}",
            "{{ 'a' * 100000000 }}",
        ];
        for t in cases {
            fails_with(t, "limit)");
        }
    }

    #[test]
    fn output_and_captures_stop_at_the_output_limit() {
        for t in [
            // Raw text, expressions, a capture, a macro's output: all counted.
            "{% for i in range(100000) %}{% for j in range(1000) %}0123456789{% endfor %}{% endfor %}",
            "{% for i in range(100000) %}{% for j in range(1000) %}{{ '0123456789' }}{% endfor %}{% endfor %}",
            "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set t %}{{ ns.s }}{{ ns.s }}{% endset %}{% set ns.s = t %}{% endfor %}",
            "{% macro d(s) %}{{ s }}{{ s }}{% endmacro %}{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = d(ns.s) %}{% endfor %}",
            "{% set x %}{% for i in range(100000) %}{% for j in range(1000) %}0123456789{% endfor %}{% endfor %}{% endset %}",
        ] {
            fails_with(t, "bytes (output limit)");
        }
    }

    #[test]
    fn ordinary_work_is_within_the_limits() {
        let long = "x".repeat(3 << 20);
        let msgs = serde_json::json!([{"role": "user", "content": long}]);
        let t = "{% for m in messages %}<{{ m.role }}>{{ m.content|trim }}{% endfor %}{% set ns = namespace(l=[]) %}{% for i in range(1000) %}{% set ns.l = ns.l + [i] %}{% endfor %}{{ ns.l|length }}|{{ ns.l|join(',')|length }}";
        let out = crate::chat::render_chat_template(t, &msgs, &Default::default()).unwrap();
        assert!(out.ends_with("1000|3889"), "{}", &out[out.len() - 20..]);
        assert_eq!(out.len(), 6 + (3 << 20) + "1000|3889".len());
        // A message larger than the output limit itself renders (the limits grow with the input).
        let big = "y".repeat(10 << 20);
        let msgs = serde_json::json!([{"role": "user", "content": big}]);
        let out = crate::chat::render_chat_template(
            "{{ messages[0].content ~ '!' }}{{ messages[0].content|replace('y', 'z') }}",
            &msgs,
            &Default::default(),
        )
        .unwrap();
        assert_eq!(out.len(), 2 * (10 << 20) + 1);
        // Control flow whose jumps the rewrite moves: recursive loops, call blocks, filter
        // blocks, loop controls, macros with defaults.
        for (t, want) in [
            ("{{ ' ' * 3 ~ [1, 'a']|join('-') ~ '%5s'|format('x') }}", "   1-a    x"),
            ("{% for x in [[1, [2]], [3]] recursive %}{{ x if x is number else loop(x) }}{% endfor %}", "123"),
            ("{% macro m() %}[{{ caller() }}]{% endmacro %}{% call m() %}hi{% endcall %}", "[hi]"),
            ("{% filter upper %}ab{{ 'c' }}{% endfilter %}", "ABC"),
            ("{% for i in range(9) %}{% if i == 2 %}{% continue %}{% endif %}{% if i > 4 %}{% break %}{% endif %}{{ i }}{% else %}none{% endfor %}", "0134"),
            ("{% macro f(a, b='x') %}{{ a }}{{ b }}{% endmacro %}{{ f(1) }}{{ f(2, b='y') }}", "1x2y"),
            ("{% set ns = namespace(n=0) %}{% for m in [1, 2, 3] if m > 1 %}{% set ns.n = ns.n + m %}{% endfor %}{{ ns.n }}", "5"),
        ] {
            assert_eq!(render(t).as_deref(), Ok(want), "{t}");
        }
    }
}
