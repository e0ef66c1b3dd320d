#!/usr/bin/env python3
"""Fails when a Rust or JS module imports one that imports it back (directly or through others).

Rust, library: the nodes are the top-level modules of `src/` (a folder counts as one module; its
files are checked among themselves too, through `super::sibling`), edges are `crate::name` paths.
Rust, CLI: each file of `src/bin/gguf-lens/` is a node, edges are `crate::name` paths.
JS: each file of `js/` and `www/` is a node, edges are relative `import`/`export … from` and
dynamic `import('./…')` specifiers.
Prints every cycle found; exit 1 when there is one.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def strip_rust_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def use_targets(text):
    """Names after `crate::` in paths and in `use crate::{a, b::c}` groups."""
    names = set(re.findall(r"\bcrate::([a-z_][a-z0-9_]*)", text))
    for group in re.findall(r"\bcrate::\{([^}]*)\}", text):
        names.update(re.findall(r"(?:^|,)\s*([a-z_][a-z0-9_]*)", group))
    return names


def rust_library_graph():
    src = ROOT / "src"
    graph = {}
    modules = {p.stem for p in src.glob("*.rs") if p.stem not in ("lib", "main")}
    modules |= {p.name for p in src.iterdir() if p.is_dir() and p.name != "bin"}
    for module in modules:
        files = [src / f"{module}.rs"] if (src / f"{module}.rs").exists() else []
        files += list((src / module).rglob("*.rs")) if (src / module).is_dir() else []
        deps = set()
        for f in files:
            deps |= use_targets(strip_rust_comments(f.read_text()))
        graph[f"src/{module}"] = {f"src/{d}" for d in deps & modules if d != module}
    return graph


def rust_folder_graphs():
    """Within each module folder: file -> sibling file through `super::name`."""
    graphs = []
    for folder in [p for p in (ROOT / "src").rglob("*") if p.is_dir()]:
        files = {p.stem: p for p in folder.glob("*.rs") if p.stem != "mod"}
        graph = {}
        for stem, f in files.items():
            text = strip_rust_comments(f.read_text())
            deps = set(re.findall(r"\bsuper::([a-z_][a-z0-9_]*)", text))
            for group in re.findall(r"\bsuper::\{([^}]*)\}", text):
                deps.update(re.findall(r"(?:^|,)\s*([a-z_][a-z0-9_]*)", group))
            rel = f.relative_to(ROOT).as_posix()
            graph[rel] = {files[d].relative_to(ROOT).as_posix() for d in deps if d in files and d != stem}
        graphs.append(graph)
    return graphs


def rust_cli_graph():
    cli = ROOT / "src/bin/gguf-lens"
    files = {p.stem: p for p in cli.glob("*.rs")}
    graph = {}
    for stem, f in files.items():
        if stem == "main":
            continue  # main declares every module and dispatches to them: the root, not a peer
        deps = use_targets(strip_rust_comments(f.read_text()))
        graph[f"cli/{stem}"] = {f"cli/{d}" for d in deps if d in files and d not in (stem, "main")}
    return graph


IMPORT = re.compile(
    r"""(?:import|export)\s[^'"`;]*?from\s*['"](\.[^'"]+)['"]|import\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)"""
)


def js_graph():
    graph = {}
    for folder in ("js", "www"):
        for f in (ROOT / folder).glob("*.js"):
            text = re.sub(r"/\*.*?\*/", "", f.read_text(), flags=re.S)
            text = re.sub(r"(?m)^\s*//[^\n]*", "", text)
            deps = set()
            for match in IMPORT.finditer(text):
                spec = next(g for g in match.groups() if g)
                target = (f.parent / spec).resolve()
                if target.suffix == ".js" and target.exists():
                    deps.add(target.relative_to(ROOT).as_posix())
            graph[f.relative_to(ROOT).as_posix()] = deps
    return graph


def cycles(graph):
    """Every elementary cycle, each reported once (Tarjan's SCCs, then one path per SCC)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                out.append(sorted(scc))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    # The detector itself: a two-file loop and a three-file loop are found, a chain is not.
    assert cycles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    found = []
    for name, graph in [("rust library", rust_library_graph()), ("rust CLI", rust_cli_graph()), ("js", js_graph())]:
        for scc in cycles(graph):
            found.append(f"{name}: these import each other: {', '.join(scc)}")
    for graph in rust_folder_graphs():
        for scc in cycles(graph):
            found.append(f"rust module folder: these import each other: {', '.join(scc)}")
    for line in found:
        print(line)
    if found:
        return 1
    print("check-cycles: no module imports one that imports it back")
    return 0


if __name__ == "__main__":
    sys.exit(main())
