"""Finds cycles in the module graph of the workspace's library crates.

    python3 scripts/module_cycles.py [CRATE_SRC ...]
        default: crates/*/src and conformance/src

A module depends on another when it names one of its items (through `use`,
a `crate::`/`super::`/`self::` path in code, or a `pub use` re-export). Names
reached through a re-export are followed to the module that defines them, so
`use crate::Context` in `server/` depends on `context`, not on the crate
root. A module's own submodule declarations (`mod x;`) are not dependencies;
a child naming its parent's items is one, as is a parent naming its child's.

The graph is checked twice: module by module, and with every module folded
into its top-level module (`server::dispatch` counts as `server`), so that
`context -> server::events` and `server::dispatch -> context` are a cycle
between `context` and `server`.

Prints each strongly connected component of more than one module and exits
1 when there is one; prints a line with the module and edge counts either way.
"""
import pathlib
import re
import sys

ITEM = re.compile(
    r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:async\s+|const\s+|unsafe\s+)*"
    r"(?:struct|enum|fn|trait|type|const|static|union|macro_rules!)\s+(r#)?(\w+)",
    re.M,
)
MOD = re.compile(r"^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", re.M)
USE = re.compile(r"^\s*(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", re.M)
PATH = re.compile(r"\b(crate|super|self)((?:::\w+)+)")


def strip(text):
    """Drops comments, string literals and `#[cfg(test)] mod tests { ... }`."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'r#*"(?:.|\n)*?"#*', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    m = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text)
    if m:
        text = text[: m.start()]
    return text


def expand_use(tree):
    """`a::{b, c::{d, e as f}}` -> [(path, local_name)]."""
    tree = tree.strip()
    out = []
    m = re.match(r"^(.*?)::\{(.*)\}$", tree, re.S)
    if m:
        prefix, inner = m.group(1), m.group(2)
        depth, start, parts = 0, 0, []
        for i, ch in enumerate(inner):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(inner[start:i])
                start = i + 1
        parts.append(inner[start:])
        for part in parts:
            part = part.strip()
            if not part:
                continue
            if part == "self":
                out.append((prefix, prefix.split("::")[-1]))
            else:
                out.extend(expand_use(prefix + "::" + part))
        return out
    alias = None
    m = re.match(r"^(.*?)\s+as\s+(\w+)$", tree)
    if m:
        tree, alias = m.group(1), m.group(2)
    last = tree.split("::")[-1]
    return [(tree, alias or last)]


class Crate:
    def __init__(self, src):
        self.src = pathlib.Path(src)
        self.files = {}  # module path (tuple) -> stripped text
        root = self.src / "lib.rs"
        self.load(root if root.exists() else self.src / "main.rs", ())

    def load(self, file, path):
        if not file.exists():
            return
        text = strip(file.read_text())
        self.files[path] = text
        base = file.parent if file.name in ("lib.rs", "main.rs", "mod.rs") else file.with_suffix("")
        for name in MOD.findall(text):
            child = path + (name,)
            for candidate in (base / f"{name}.rs", base / name / "mod.rs"):
                if candidate.exists():
                    self.load(candidate, child)
                    break

    def items(self, module):
        return {m.group(2) for m in ITEM.finditer(self.files.get(module, ""))}

    def uses(self, module):
        """(path, local name, is_pub) of every `use` in the module."""
        out = []
        for m in USE.finditer(self.files.get(module, "")):
            for path, name in expand_use(m.group(2)):
                out.append((path, name, bool(m.group(1))))
        return out

    def absolute(self, module, path):
        parts = path.split("::")
        if parts[0] == "crate":
            return tuple(parts[1:])
        if parts[0] in ("super", "self"):
            base = list(module)
            while parts and parts[0] in ("super", "self"):
                if parts[0] == "super" and base:
                    base.pop()
                parts = parts[1:]
            return tuple(base) + tuple(parts)
        if parts[0] in [p[-1] for p in self.files if len(p) == len(module) + 1 and p[:-1] == module]:
            return module + tuple(parts)  # a child module named without `self::`
        return None  # another crate

    def definer(self, path, seen=None):
        """The module defining what `path` (absolute) names, following re-exports."""
        seen = seen or set()
        if path in seen:
            return None
        seen.add(path)
        # The longest prefix that is a module.
        for cut in range(len(path), -1, -1):
            module = path[:cut]
            if module in self.files:
                break
        else:
            return None
        rest = path[cut:]
        if not rest:
            return module
        name = rest[0]
        if name in self.items(module):
            return module
        for use_path, local, _ in self.uses(module):
            if local == name:
                target = self.absolute(module, use_path)
                if target is None:
                    return None
                return self.definer(target + rest[1:], seen)
        return module

    def edges(self):
        edges = set()
        for module, text in self.files.items():
            targets = []
            for use_path, _, _ in self.uses(module):
                target = self.absolute(module, use_path)
                if target is not None:
                    targets.append(target)
            # Paths in code; `use` items were read above (a `use a::{b, c}`
            # would otherwise read as a path to `a` itself).
            for m in PATH.finditer(USE.sub("", text)):
                target = self.absolute(module, m.group(1) + m.group(2))
                if target is not None:
                    targets.append(target)
            for target in targets:
                definer = self.definer(target)
                if definer is not None and definer != module:
                    edges.add((module, definer))
        return edges


def components(nodes, edges):
    """Tarjan's strongly connected components."""
    graph = {n: [] for n in nodes}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
        graph.setdefault(b, [])
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(comp)

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def self_test():
    """A cycle through a re-export is found; the same crate without it is clean."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "src"
        (src / "a").mkdir(parents=True)
        (src / "lib.rs").write_text("pub mod a;\npub mod b;\npub use b::Thing;\n")
        (src / "a" / "mod.rs").write_text("mod leaf;\npub use leaf::Leaf;\npub struct A(crate::Thing);\n")
        (src / "a" / "leaf.rs").write_text("pub struct Leaf;\n")
        (src / "b.rs").write_text("pub struct Thing;\nfn f() -> crate::a::Leaf { crate::a::Leaf }\n")
        crate = Crate(src)
        clean = [c for c in components(crate.files, crate.edges()) if len(c) > 1]
        (src / "b.rs").write_text("pub struct Thing(crate::a::A);\n")
        crate = Crate(src)
        cyclic = [sorted(c) for c in components(crate.files, crate.edges()) if len(c) > 1]
    ok = clean == [] and cyclic == [[("a",), ("b",)]]
    print(f"module_cycles self-test: {'ok' if ok else f'FAILED: {clean} {cyclic}'}")
    return 0 if ok else 1


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    roots = argv or sorted(
        str(p) for p in [*pathlib.Path("crates").glob("*/src"), pathlib.Path("conformance/src")]
        if (p / "lib.rs").exists() or (p / "main.rs").exists()
    )
    status = 0
    for src in roots:
        crate = Crate(src)
        edges = crate.edges()
        top = {(a[:1], b[:1]) for a, b in edges if a[:1] != b[:1] and a and b}
        tops = {m[:1] for m in crate.files if m}
        name = lambda m: "::".join(("crate",) + m)
        for label, nodes, graph in (("modules", crate.files, edges), ("top-level modules", tops, top)):
            cycles = [c for c in components(nodes, graph) if len(c) > 1]
            print(f"{src}: {len(nodes)} {label}, {len(graph)} dependencies, {len(cycles)} cycle(s)")
            for comp in cycles:
                status = 1
                members = set(comp)
                print("  cycle: " + ", ".join(sorted(name(m) for m in comp)))
                for a, b in sorted(graph):
                    if a in members and b in members:
                        print(f"    {name(a)} -> {name(b)}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
