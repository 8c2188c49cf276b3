"""Programs and modules: a `@pl.program` class → `ir.Program`, and DSL text (what
`ir.python_print` emits) → Program / Function.

All method signatures are collected before any body is parsed, so `self.f(...)` calls get
their callee's return type whatever the method order; a function without a return
annotation is parsed on demand when a caller needs its type.
"""

from __future__ import annotations

import ast
import importlib
from typing import Optional

from pypto.ir.function import Function, Program
from pypto.language.parser.context import FunctionContext, ModuleEnv
from pypto.language.parser.diagnostics import ParserSyntaxError, UnsupportedFeatureError
from pypto.language.parser.dispatch import eval_expr, with_span
from pypto.language.parser.functions import parse_function_def, read_decorator_options, signature_of
from pypto.language.parser.source import parse_text

_ALLOWED_IMPORTS = ("pypto", "math", "numpy", "typing", "__future__", "ml_dtypes")


def decorator_kind(ctx: FunctionContext, deco: ast.expr) -> Optional[str]:
    """'program' / 'function' / 'inline' for the pl decorators, else None."""
    from pypto.language import decorators
    target = deco.func if isinstance(deco, ast.Call) else deco
    try:
        value = eval_expr(ctx, target)
    except Exception:  # noqa: BLE001 - an unknown decorator is reported by the caller
        return None
    if value is decorators.program:
        return "program"
    if value is decorators.function:
        return "function"
    if value is decorators.inline:
        return "inline"
    return None


def parse_program_node(env: ModuleEnv, node: ast.ClassDef, *, strict_ssa: bool = False,
                       name: Optional[str] = None) -> Program:
    env.in_program = True
    ctx0 = FunctionContext(env)
    methods = []
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            kinds = [(d, decorator_kind(ctx0, d)) for d in item.decorator_list]
            fdeco = [d for d, k in kinds if k == "function"]
            if not fdeco:
                raise ParserSyntaxError(f"method '{item.name}' of a @pl.program class needs @pl.function",
                                        ctx0.span(item), hint="decorate it with @pl.function(type=...)")
            opts = with_span(ctx0, fdeco[0], read_decorator_options, ctx0, fdeco[0])
            opts.strict_ssa = opts.strict_ssa or strict_ssa
            methods.append((item, opts))
        elif isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant) or isinstance(item, ast.Pass):
            continue
        elif isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
            env.globals = dict(env.globals)
            env.globals[item.targets[0].id] = eval_expr(ctx0, item.value)
        else:
            raise UnsupportedFeatureError(f"Unsupported statement type in a @pl.program class: {type(item).__name__}",
                                          ctx0.span(item), hint="a program class holds @pl.function methods")
    for item, _ in methods:
        env.signatures[item.name] = with_span(ctx0, item, signature_of, env, item, True)
    parsed: dict = {}
    in_progress: set = set()
    by_name = {item.name: (item, opts) for item, opts in methods}

    def parse_one(fname: str) -> Function:
        if fname not in parsed:
            if fname in in_progress:
                item = by_name[fname][0]
                raise ParserSyntaxError(f"cannot infer the return type of '{fname}' (it calls itself)",
                                        ctx0.span(item), hint="annotate its return type")
            in_progress.add(fname)
            item, opts = by_name[fname]
            parsed[fname] = parse_function_def(env, item, opts, method=True)
            in_progress.discard(fname)
        return parsed[fname]

    env.resolve_return = lambda fname: list(parse_one(fname).return_types)
    for item, _ in methods:
        parse_one(item.name)
    functions = [parsed[item.name] for item, _ in methods]
    functions += _auto_added_closure(env, set(parsed))
    return Program(functions, name or node.name, ctx0.span(node))


def _auto_added_closure(env: ModuleEnv, present: set) -> list:
    """Module-level functions called by bare name, plus the module-level functions *they* call."""
    from pypto.ir.expr import GlobalVar
    from pypto.ir.visitor import collect
    added: dict = {n: f for n, f in env.auto_added.items() if n not in present}
    pending = list(added.values())
    while pending:
        fn = pending.pop()
        for gv in collect(fn.body, lambda n: isinstance(n, GlobalVar)):
            callee = env.globals.get(gv.name)
            if gv.name not in present and gv.name not in added and isinstance(callee, Function) \
                    and callee.name == gv.name:
                added[gv.name] = callee
                pending.append(callee)
    return list(added.values())


def parse_module_text(text: str, filename: str, user_globals: Optional[dict] = None):
    """Parse DSL text: imports, module-level constants / `pl.dynamic` dims, programs and functions."""
    import pypto.language as pl
    import pypto.language.distributed as pld
    tree, src = parse_text(text, filename)
    globals_ = {"pl": pl, "pld": pld, **(user_globals or {})}
    env = ModuleEnv(src, globals_)
    ctx0 = FunctionContext(env)
    programs, functions = [], []
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            _do_import(ctx0, stmt, globals_)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            globals_[stmt.targets[0].id] = eval_expr(ctx0, stmt.value)
        elif isinstance(stmt, ast.ClassDef):
            kinds = [decorator_kind(ctx0, d) for d in stmt.decorator_list]
            if "program" not in kinds:
                raise ParserSyntaxError(f"class '{stmt.name}' needs @pl.program", ctx0.span(stmt))
            deco = stmt.decorator_list[kinds.index("program")]
            strict = _program_strict(ctx0, deco)
            prog = parse_program_node(ModuleEnv(src, globals_), stmt, strict_ssa=strict)
            globals_[stmt.name] = prog
            programs.append(prog)
        elif isinstance(stmt, ast.FunctionDef):
            kinds = [(d, decorator_kind(ctx0, d)) for d in stmt.decorator_list]
            if any(k == "inline" for _, k in kinds):
                from pypto.language.parser.inline import InlineFunction
                globals_[stmt.name] = InlineFunction.from_ast(stmt, src, globals_)
                continue
            fdeco = [d for d, k in kinds if k == "function"]
            if not fdeco:
                raise ParserSyntaxError(f"function '{stmt.name}' needs @pl.function", ctx0.span(stmt))
            opts = with_span(ctx0, fdeco[0], read_decorator_options, ctx0, fdeco[0])
            fn = parse_function_def(ModuleEnv(src, globals_), stmt, opts, method=False)
            globals_[stmt.name] = fn
            functions.append(fn)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) or isinstance(stmt, ast.Pass):
            continue
        else:
            raise UnsupportedFeatureError(f"Unsupported statement type at module level: {type(stmt).__name__}",
                                          ctx0.span(stmt), hint="DSL text holds imports, constants, pl.dynamic dims, "
                                                                "@pl.program classes and @pl.function functions")
    return programs, functions


def _program_strict(ctx, deco) -> bool:
    if isinstance(deco, ast.Call):
        for kw in deco.keywords:
            if kw.arg == "strict_ssa":
                return bool(eval_expr(ctx, kw.value))
    return False


def _do_import(ctx, stmt, globals_: dict) -> None:
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            mod = _import(ctx, stmt, alias.name)
            if alias.asname:
                globals_[alias.asname] = mod
            else:
                globals_[alias.name.split(".")[0]] = _import(ctx, stmt, alias.name.split(".")[0])
    else:
        base = stmt.module or ""
        mod = _import(ctx, stmt, base)
        for alias in stmt.names:
            if hasattr(mod, alias.name):
                globals_[alias.asname or alias.name] = getattr(mod, alias.name)
            else:
                globals_[alias.asname or alias.name] = _import(ctx, stmt, f"{base}.{alias.name}")


def _import(ctx, stmt, name: str):
    if not name.split(".")[0] in _ALLOWED_IMPORTS:
        raise UnsupportedFeatureError(f"DSL text may not import '{name}'", ctx.span(stmt),
                                      hint="DSL text imports pypto modules (import pypto.language as pl)")
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise ParserSyntaxError(f"cannot import '{name}': {e}", ctx.span(stmt)) from None
