//! jinja2's `|safe` gives a markupsafe `Markup`, and `Markup + str` HTML-escapes the `str` even
//! with autoescape off (as transformers renders). functionary-medium-v3.1 depends on it:
//! `"Use the function '"|safe + name + ...` escapes the name and the tool's JSON. minijinja
//! keeps a "safe" flag on strings but drops it on `+`. So, in templates that use `safe`, each
//! `a + b` is rewritten to `__py_add(a, b)`: a safe string on either side escapes a plain string
//! on the other and gives a safe string, as `Markup.__add__`/`__radd__` do; anything else is
//! minijinja's own `+`.

use minijinja::machinery::ast::{self, CallArg, Expr, Stmt};
use minijinja::machinery::{parse, WhitespaceConfig};
use minijinja::syntax::SyntaxConfig;
use minijinja::value::ValueKind;
use minijinja::{Error, ErrorKind, State, Value};

/// The function's name in the environment.
pub const FUNCTION: &str = "__py_add";

/// `source` with every `+` made a `__py_add` call when the template uses the `safe` filter;
/// unchanged otherwise, or when it does not parse (minijinja then reports the error).
// SyntaxConfig is a unit struct only without minijinja's `custom_syntax` feature.
#[allow(clippy::default_constructed_unit_structs)]
pub fn rewrite_adds(source: &str) -> String {
    if !source.contains("safe") {
        return source.to_string();
    }
    let Ok(tree) = parse(
        source,
        "chat_template",
        SyntaxConfig::default(),
        WhitespaceConfig::default(),
    ) else {
        return source.to_string();
    };
    let mut w = Walker {
        src: source.as_bytes(),
        edits: Vec::new(),
        uses_safe: false,
        ok: true,
    };
    w.stmt(&tree);
    if !w.uses_safe || !w.ok || w.edits.is_empty() {
        return source.to_string();
    }
    // At one position, closing parentheses go before opening calls.
    w.edits.sort_by_key(|(pos, kind)| (*pos, *kind));
    let mut out = String::with_capacity(source.len() + w.edits.len() * 10);
    let mut at = 0;
    for (pos, kind) in w.edits {
        let Some(text) = source.get(at..pos) else {
            return source.to_string(); // overlapping edits: not a shape this rewrite knows
        };
        out.push_str(text);
        at = pos;
        match kind {
            Edit::Close => out.push(')'),
            Edit::Comma => {
                out.push(',');
                at = pos + 1; // replaces the `+`
            }
            Edit::Open => {
                out.push_str(FUNCTION);
                out.push('(');
            }
        }
    }
    out.push_str(&source[at..]);
    out
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Edit {
    Close,
    Comma,
    Open,
}

struct Walker<'s> {
    src: &'s [u8],
    edits: Vec<(usize, Edit)>,
    uses_safe: bool,
    ok: bool,
}

impl Walker<'_> {
    fn stmts(&mut self, s: &[Stmt]) {
        for s in s {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Template(t) => self.stmts(&t.children),
            Stmt::EmitExpr(e) => self.expr(&e.expr),
            Stmt::EmitRaw(_) | Stmt::Continue(_) | Stmt::Break(_) => {}
            Stmt::ForLoop(f) => {
                self.expr(&f.iter);
                self.opt(f.filter_expr.as_ref());
                self.stmts(&f.body);
                self.stmts(&f.else_body);
            }
            Stmt::IfCond(c) => {
                self.expr(&c.expr);
                self.stmts(&c.true_body);
                self.stmts(&c.false_body);
            }
            Stmt::WithBlock(w) => {
                for (_, e) in &w.assignments {
                    self.expr(e);
                }
                self.stmts(&w.body);
            }
            Stmt::Set(s) => self.expr(&s.expr),
            Stmt::SetBlock(s) => {
                self.opt(s.filter.as_ref());
                self.stmts(&s.body);
            }
            Stmt::AutoEscape(a) => {
                self.expr(&a.enabled);
                self.stmts(&a.body);
            }
            Stmt::FilterBlock(f) => {
                self.expr(&f.filter);
                self.stmts(&f.body);
            }
            Stmt::Block(b) => self.stmts(&b.body),
            Stmt::Import(i) => self.expr(&i.expr),
            Stmt::FromImport(i) => self.expr(&i.expr),
            Stmt::Extends(e) => self.expr(&e.name),
            Stmt::Include(i) => self.expr(&i.name),
            Stmt::Macro(m) => self.macro_(m),
            Stmt::CallBlock(c) => {
                self.call(&c.call);
                self.macro_(&c.macro_decl);
            }
            Stmt::Do(d) => self.call(&d.call),
        }
    }

    fn macro_(&mut self, m: &ast::Macro) {
        for d in &m.defaults {
            self.expr(d);
        }
        self.stmts(&m.body);
    }

    fn call(&mut self, c: &ast::Call) {
        self.expr(&c.expr);
        self.args(&c.args);
    }

    fn args(&mut self, args: &[CallArg]) {
        for a in args {
            match a {
                CallArg::Pos(e) | CallArg::Kwarg(_, e) | CallArg::PosSplat(e) => self.expr(e),
                CallArg::KwargSplat(e) => self.expr(e),
            }
        }
    }

    fn opt(&mut self, e: Option<&Expr>) {
        if let Some(e) = e {
            self.expr(e);
        }
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Var(_) | Expr::Const(_) => {}
            Expr::Slice(s) => {
                self.expr(&s.expr);
                self.opt(s.start.as_ref());
                self.opt(s.stop.as_ref());
                self.opt(s.step.as_ref());
            }
            Expr::UnaryOp(u) => self.expr(&u.expr),
            Expr::BinOp(b) => {
                if matches!(b.op, ast::BinOpKind::Add) {
                    self.add(b.span(), &b.left);
                }
                self.expr(&b.left);
                self.expr(&b.right);
            }
            Expr::Compare(c) => {
                self.expr(&c.expr);
                for op in &c.ops {
                    self.expr(&op.expr);
                }
            }
            Expr::IfExpr(i) => {
                self.expr(&i.test_expr);
                self.expr(&i.true_expr);
                self.opt(i.false_expr.as_ref());
            }
            Expr::Filter(f) => {
                if f.name == "safe" {
                    self.uses_safe = true;
                }
                self.opt(f.expr.as_ref());
                self.args(&f.args);
            }
            Expr::Test(t) => {
                self.expr(&t.expr);
                self.args(&t.args);
            }
            Expr::GetAttr(g) => self.expr(&g.expr),
            Expr::GetItem(g) => {
                self.expr(&g.expr);
                self.expr(&g.subscript_expr);
            }
            Expr::Call(c) => self.call(c),
            Expr::List(l) => {
                for i in &l.items {
                    self.expr(i);
                }
            }
            Expr::Map(m) => {
                for (k, v) in m.keys.iter().zip(&m.values) {
                    self.expr(k);
                    self.expr(v);
                }
            }
        }
    }

    /// Records the edits for one `left + right` spanning `span`: the `+` is the first
    /// non-space, non-`)` byte after the left operand; anything else abandons the rewrite.
    fn add(&mut self, span: minijinja::machinery::Span, left: &Expr) {
        let (Ok(start), Ok(end), Some(left_end)) = (
            usize::try_from(span.start_offset),
            usize::try_from(span.end_offset),
            expr_end(left),
        ) else {
            self.ok = false;
            return;
        };
        let plus = self
            .src
            .get(left_end..end)
            .and_then(|s| {
                s.iter()
                    .position(|c| !(c.is_ascii_whitespace() || *c == b')'))
            })
            .map(|p| left_end + p);
        match plus {
            Some(p) if self.src[p] == b'+' && start < p && end <= self.src.len() => {
                self.edits.push((start, Edit::Open));
                self.edits.push((p, Edit::Comma));
                self.edits.push((end, Edit::Close));
            }
            _ => self.ok = false,
        }
    }
}

fn expr_end(e: &Expr) -> Option<usize> {
    let span = match e {
        Expr::Var(s) => s.span(),
        Expr::Const(s) => s.span(),
        Expr::Slice(s) => s.span(),
        Expr::UnaryOp(s) => s.span(),
        Expr::BinOp(s) => s.span(),
        Expr::Compare(s) => s.span(),
        Expr::IfExpr(s) => s.span(),
        Expr::Filter(s) => s.span(),
        Expr::Test(s) => s.span(),
        Expr::GetAttr(s) => s.span(),
        Expr::GetItem(s) => s.span(),
        Expr::Call(s) => s.span(),
        Expr::List(s) => s.span(),
        Expr::Map(s) => s.span(),
    };
    usize::try_from(span.end_offset).ok()
}

/// Python's `a + b` with markupsafe's `Markup` as minijinja's safe strings.
pub fn py_add(state: &State, a: Value, b: Value) -> Result<Value, Error> {
    let is_str = |v: &Value| v.kind() == ValueKind::String;
    if is_str(&a) && is_str(&b) && (a.is_safe() || b.is_safe()) {
        let mut s = String::new();
        for v in [&a, &b] {
            let text = v.as_str().unwrap_or_default();
            if v.is_safe() {
                s.push_str(text);
            } else {
                escape_into(&mut s, text);
            }
        }
        return Ok(Value::from_safe_string(s));
    }
    let expr = state.env().compile_expression("a + b")?;
    expr.eval(minijinja::context! { a => a, b => b })
        .map_err(|e| match e.detail() {
            Some(d) => Error::new(ErrorKind::InvalidOperation, d.to_string()),
            None => e,
        })
}

/// markupsafe's `escape`.
fn escape_into(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rewrite_adds as r;

    #[test]
    fn rewrites_adds_only_with_safe() {
        assert_eq!(r("{{ a + b }}"), "{{ a + b }}");
        assert_eq!(
            r("{{ 'x'|safe + a['n'] + (b) }}"),
            "{{ __py_add(__py_add('x'|safe , a['n']) , (b)) }}"
        );
        assert_eq!(
            r("{% set s = (a + 'é+') %}{{ s|safe }}{{ f(c+d) }}"),
            "{% set s = (__py_add(a , 'é+')) %}{{ s|safe }}{{ f(__py_add(c,d)) }}"
        );
    }

    /// Values jinja2 3.1 renders for these (checked by hand in /root/oracle-venv).
    #[test]
    fn renders_as_jinja2_markup() {
        let render = |t: &str| {
            crate::chat::render_chat_template(t, &serde_json::json!([]), &Default::default())
        };
        let cases = [
            ("{{ 'a'|safe + '<b>' }}", "a&lt;b&gt;"),
            ("{{ '<' + '>'|safe }}", "&lt;>"),
            ("{{ 1 + 2 }}{{ [1] + [2] }}{{ ''|safe }}", "3[1, 2]"),
            ("{{ ('x'|safe + '\"') ~ '<' }}", "x&#34;<"),
            ("{% set m = '&'|safe %}{{ m + \"'\" + m }}", "&&#39;&"),
        ];
        for (t, want) in cases {
            assert_eq!(render(t).as_deref(), Ok(want), "{t}");
        }
        assert!(render("{{ 'a'|safe + none }}").is_err());
        // A long `+` chain (one deep tree): the rewrite nests calls, which minijinja's parser
        // refuses past its depth limit with an error.
        let long = format!("{{{{ 'a'|safe{} }}}}", " + 'b'".repeat(3_000));
        assert!(render(&long).is_err());
        let long = format!("{{{{ 'a'{} }}}}", " + 'b'".repeat(3_000));
        assert_eq!(render(&long).map(|s| s.len()), Ok(3_001));
    }
}
