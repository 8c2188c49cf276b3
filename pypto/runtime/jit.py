"""`@pl.jit`: compile a Python function for the shapes and dtypes it is called with, cache, run.

    @pl.jit
    def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.add(pl.load(a, [0, 0], [64, 128]), pl.load(b, [0, 0], [64, 128])), [0, 0], c)
        return c

    tile_add(a, b, c, config=RunConfig())       # compiles once per (shapes, dtypes, scalars, options)
    compiled = tile_add.compile(a, b, c)        # the CompiledProgram, without running
    compiled = kernel.compile()                 # fully annotated parameters: no sample arguments
    compiled = kernel.compile(n=pl.RUNTIME)     # scalar `n` stays a runtime parameter of the artifact
    lowered = tile_add.lower(a, b, c)           # the post-pass ir.Program

Bare `pl.Tensor` parameters take the shape and dtype of the argument; scalar arguments are
specialization constants (one compiled artifact per value); dims annotated with a
`pl.dynamic` symbol stay symbolic and drop out of the cache key. Sub-kernels written with
`@pl.jit.incore` / `@pl.jit.inline` / `@pl.jit.opaque` are called by bare name: they are found
in the entry's globals, parsed with it, and assembled into one program. The cache lives in
memory, keyed by the sources of the entry and its sub-kernels, the argument specs and the
compile options. Each argument is classified once per call (`_classify`: numpy as is, a torch
tensor as a view of its memory, or a scalar); the key, the compile and the run all use that.
`pl.jit` is this module's `jit`, reached lazily from pypto.language.
"""

from __future__ import annotations

import dis
import enum
import functools
import hashlib
import inspect
import types
from typing import Any, Optional

import numpy as np

from pypto.call_site import reject_unknown_options, user_call_span
from pypto.errors import PyptoError, TypeCheckError, UnsupportedError
from pypto.interop import as_numpy
from pypto.ir.enums import FunctionType
from pypto.ir.expr import ConstInt
from pypto.ir.types import TensorType
from pypto.runtime.config import RunConfig, default_config
from pypto.runtime.sim.launch import launch
from pypto.runtime.worker import current_worker

_SCALARS = (bool, int, float, np.integer, np.floating, np.bool_)


class _Runtime:
    """`pl.RUNTIME`: given to `kernel.compile(n=pl.RUNTIME)` (or as a default), scalar `n` is not specialized:
    it stays a parameter of the compiled artifact, whose value each dispatch passes."""

    def __repr__(self) -> str:
        return "pl.RUNTIME"

    def __reduce__(self):
        return "RUNTIME"


RUNTIME = _Runtime()


class _FromSignature:
    """`compile()` without a sample for a fully annotated tensor parameter: its annotation is the whole spec.
    `key` is the cache-key part a sample of that spec would give (so both share one cache entry)."""
    __slots__ = ("key",)

    def __init__(self, t: TensorType):
        shape = tuple(int(d.value) if isinstance(d, ConstInt) else None for d in t.shape)
        self.key = (shape, t.dtype.to_numpy().str)


_PLACEHOLDERS = (_Runtime, _FromSignature)


def _checked_config(config) -> RunConfig:
    """`config=` must be a RunConfig (a platform name alone is a common slip: say how to write it)."""
    if config is None:
        return default_config()
    if not isinstance(config, RunConfig):
        hint = (f"write config=RunConfig(platform={config!r})" if isinstance(config, str)
                else "pass config=RunConfig(...) (from pypto.runtime import RunConfig)")
        raise TypeCheckError(f"config= must be a RunConfig, got {type(config).__name__} {config!r}",
                             user_call_span(), hint=hint)
    return config


class _Call:
    """One call's arguments, classified once: `arrays[i]` is the numpy array behind argument i (None for a
    scalar); `torch` says whether any came as a torch tensor (results then go back as torch tensors)."""
    __slots__ = ("args", "arrays", "torch")

    def __init__(self, args: list):
        self.args = args
        self.arrays = arrays = []
        self.torch = False
        for x in args:
            if isinstance(x, np.ndarray):
                arrays.append(x)
                continue
            arr = as_numpy(x)
            arrays.append(arr)
            self.torch = self.torch or arr is not None

    def tensors(self) -> list:
        return [a for a in self.arrays if a is not None]


class JITFunction:
    """A jit-compiled function (an entry, or a sub-kernel found by its entries)."""

    def __init__(self, pyfunc, *, func_type: FunctionType = FunctionType.Orchestration, level=None,
                 auto_scope: bool = True, role=None):
        functools.update_wrapper(self, pyfunc)
        self.pyfunc = pyfunc
        self.func_type = func_type
        self.level = level
        self.role = role                  # Role.Orchestrator for @pl.jit.host
        self.auto_scope = auto_scope
        self.param_names = list(inspect.signature(pyfunc).parameters)
        self._cache: dict = {}
        self._by_arrays: dict = {}        # the cached call's shortcut: (shapes, dtypes, compile key) → program
        self._last_hit: Optional[tuple] = None    # (key, program) of the shortcut's last hit
        self._deps: Optional[list] = None
        self._source_hash: Optional[str] = None
        self._annotations: Optional[dict] = None

    # ------------------------------------------------------------------ discovery
    def deps(self) -> list:
        """Sub-kernels this function calls by bare name (transitively), found once in its globals."""
        if self._deps is None:
            found: dict = {}

            def visit(fn: "JITFunction"):
                code = fn.pyfunc.__code__
                names = set(code.co_names) | set(code.co_freevars)
                scope = dict(fn.pyfunc.__globals__)
                if fn.pyfunc.__closure__:
                    scope.update(zip(code.co_freevars, (c.cell_contents for c in fn.pyfunc.__closure__)))
                for name in sorted(names):
                    obj = scope.get(name)
                    if isinstance(obj, JITFunction) and (obj.func_type is not FunctionType.Orchestration
                                                         or self.is_host) and name not in found:
                        found[name] = obj
                        visit(obj)
            visit(self)
            self._deps = list(found.items())
        return self._deps

    def source_hash(self) -> str:
        if self._source_hash is None:
            h = hashlib.sha256()
            for fn in [self] + [d for _, d in self.deps()]:
                try:
                    h.update(inspect.getsource(fn.pyfunc).encode())
                except (OSError, TypeError):
                    h.update(fn.pyfunc.__code__.co_code)
                h.update(fn.func_type.name.encode())
            self._source_hash = h.hexdigest()
        return self._source_hash

    def annotations(self) -> dict:
        if self._annotations is None:
            try:
                self._annotations = inspect.get_annotations(self.pyfunc, eval_str=True)
            except Exception:
                self._annotations = dict(getattr(self.pyfunc, "__annotations__", {}))
        return self._annotations

    # ------------------------------------------------------------------ specialization
    def _signature_values(self, args: tuple, kwargs: dict) -> dict:
        """`compile()`'s arguments by name, the missing ones read from the signature: a fully annotated tensor
        is compiled from its annotation, a scalar needs a value, pl.RUNTIME (also as its default) or nothing."""
        from pypto.ir.types import ScalarType
        values = dict(zip(self.param_names, args))
        values.update(kwargs)
        defaults = inspect.signature(self.pyfunc).parameters
        ann = self.annotations()
        for name in self.param_names:
            if name in values or name not in defaults:
                continue
            t = ann.get(name)
            default = defaults[name].default
            if default is not inspect.Parameter.empty:
                values[name] = default
            elif isinstance(t, TensorType):
                values[name] = _FromSignature(t)
            elif isinstance(t, ScalarType):
                raise TypeCheckError(f"{self.__name__}.compile(): scalar parameter '{name}' needs a value",
                                     user_call_span(), hint=f"pass {name}=<value> to specialize it, or "
                                                            f"{name}=pl.RUNTIME to leave it a runtime parameter")
            else:
                raise TypeCheckError(f"{self.__name__}.compile(): parameter '{name}' is a bare pl.Tensor, so the "
                                     "signature holds no shape or dtype for it", user_call_span(),
                                     hint="annotate it as pl.Tensor[[dims...], dtype], or pass sample tensors to "
                                          "compile(...)")
        for name, value in values.items():
            if isinstance(value, _Runtime) and not isinstance(ann.get(name), ScalarType):
                raise TypeCheckError(f"{self.__name__}.compile(): pl.RUNTIME given for '{name}', which is not an "
                                     "annotated pl.Scalar parameter", user_call_span(),
                                     hint=f"annotate it as {name}: pl.Scalar[pl.INT32] (or another dtype)")
        return values

    def _bind(self, args: tuple, kwargs: Optional[dict] = None, placeholders: bool = False) -> _Call:
        """Match the call's arguments to the parameters (by position or name) and check each is an array or
        a number; a mistake is a TypeCheckError at the user's call naming the parameter."""
        kwargs = kwargs or {}
        signature = f"{self.__name__}({', '.join(self.param_names)})"
        for name in kwargs:
            if name not in self.param_names:
                raise TypeCheckError(f"{signature} got an unexpected keyword argument '{name}'", user_call_span(),
                                     hint="compile and run options go in config=RunConfig(...)")
        if len(args) > len(self.param_names):
            raise TypeCheckError(f"{signature} takes {len(self.param_names)} arguments, got {len(args) + len(kwargs)}",
                                 user_call_span())
        values = dict(zip(self.param_names, args))
        for name, value in kwargs.items():
            if name in values:
                raise TypeCheckError(f"{signature} got multiple values for argument '{name}'", user_call_span())
            values[name] = value
        missing = [n for n in self.param_names if n not in values]
        if missing:
            raise TypeCheckError(f"{signature} is missing argument{'s' if len(missing) > 1 else ''} "
                                 f"{', '.join(repr(n) for n in missing)} (got {len(values)} of "
                                 f"{len(self.param_names)})", user_call_span())
        call = _Call([values[n] for n in self.param_names])
        for name, x, arr in zip(self.param_names, call.args, call.arrays):
            if arr is None and not isinstance(x, _SCALARS) and not (placeholders and isinstance(x, _PLACEHOLDERS)):
                if isinstance(x, _Runtime):
                    raise TypeCheckError(f"{self.__name__}(): pl.RUNTIME is a compile-time marker, not a value for "
                                         f"'{name}'", user_call_span(),
                                         hint="compile(...) with pl.RUNTIME, then pass the value to the compiled "
                                              "program")
                hint = ("convert it with np.asarray(..., dtype=np.float32)" if isinstance(x, (list, tuple))
                        else "pass a numpy array, a torch CPU tensor or a Python number")
                raise TypeCheckError(f"{self.__name__}(): argument '{name}' must be an array (numpy / torch CPU) or "
                                     f"a Python scalar, got {type(x).__name__}", user_call_span(), hint=hint)
        return call

    def _key(self, call: _Call, config) -> tuple:
        parts = []
        ann = self.annotations()
        for name, x, arr in zip(self.param_names, call.args, call.arrays):
            if arr is None:
                parts.append(x.key if isinstance(x, _FromSignature) else (type(x).__name__, x))
                continue
            shape, dtype = arr.shape, arr.dtype
            t = ann.get(name)
            if isinstance(t, TensorType):          # declared dims: symbolic ones drop out of the key
                shape = tuple(n if isinstance(d, ConstInt) else None for d, n in zip(t.shape, shape))
            parts.append((shape, dtype.str))
        return (self.source_hash(), tuple(parts), config.compile_key(), self._read_globals())

    def _read_globals(self) -> tuple:
        """The values of the module constants and closure variables this kernel and its sub-kernels read
        (`SCALE = 3.0`): part of the cache key, so changing one between calls compiles again."""
        readers = self.__dict__.get("_global_readers")
        if readers is None:
            readers = self.__dict__["_global_readers"] = [
                reader for fn in [self] + [d for _, d in self.deps()] for reader in _global_readers(fn)]
        values = []
        for fn_name, name, cell, scope in readers:
            if cell is not None:
                try:
                    value = cell.cell_contents
                except ValueError:                       # an empty cell
                    continue
            else:
                value = scope.get(name, _MISSING)
                if value is _MISSING:                    # an attribute name (`pl.add`), not a global
                    continue
            cls = value.__class__
            if cls in _PLAIN_CONSTANT_TYPES or (cls not in _NEVER_CONSTANT_TYPES and _is_constant(value)):
                values.append((fn_name, name, type(value).__name__, value))
        return tuple(values)

    def _overrides(self, call: _Call) -> dict:
        from pypto.ir.dtypes import DataType
        ann = self.annotations()
        out: dict = {}
        for name, x, arr in zip(self.param_names, call.args, call.arrays):
            if arr is None:
                if not isinstance(x, _PLACEHOLDERS):        # those keep their annotation (a runtime parameter)
                    out[name] = x.item() if isinstance(x, np.generic) else x     # _bind checked it is a number
                continue
            if isinstance(ann.get(name), TensorType):
                continue                            # fully annotated: the parser reads it (and checks calls)
            shape, dtype = arr.shape, arr.dtype
            try:
                dt = DataType.from_numpy(dtype)
            except Exception:
                raise TypeCheckError(f"{self.__name__}(): argument '{name}' has unsupported dtype {dtype}",
                                     user_call_span()) from None
            out[name] = TensorType(list(shape), dt)
        return out

    def _parse(self, call: _Call):
        from pypto.ir.function import Program
        from pypto.language.parser import parse_function
        made: list = []                          # specialized sub-kernels, in the order they were made
        env: dict = {}
        for name, dep in self.deps():
            env[name] = _CallSiteSpecializer(dep, env, made)
        entry = parse_function(self.pyfunc, func_type=self.func_type, level=self.level, role=self.role, attrs=None,
                               overrides=self._overrides(call), extra_globals=env, auto_scope=self.auto_scope)
        return Program([f for f in made if f.name != entry.name] + [entry], self.__name__)

    # ------------------------------------------------------------------ public API
    def compile(self, *args, config=None, **kwargs):
        """The CompiledProgram for these argument shapes / dtypes / scalar values (cached); parameters left out
        are read from the signature (see `_signature_values`)."""
        return self._compiled(self._bind_for_compile(args, kwargs), _checked_config(config))

    def _bind_for_compile(self, args: tuple, kwargs: dict) -> _Call:
        if any(name not in self.param_names for name in kwargs):
            return self._bind(args, kwargs)             # reports the unexpected keyword
        if len(args) + len(kwargs) < len(self.param_names) or \
                any(isinstance(v, _Runtime) for v in (*args, *kwargs.values())):
            return self._bind((), self._signature_values(args, kwargs), placeholders=True)
        return self._bind(args, kwargs)

    def _compiled(self, call: _Call, config):
        if self.is_host:
            return self._compile_host(call, config)
        if self.func_type is not FunctionType.Orchestration:
            raise TypeError(f"'{self.__name__}' is a @pl.jit.{self.func_type.name.lower()} sub-kernel; call it from "
                            "a @pl.jit entry function")
        key = self._key(call, config)
        compiled = self._cache.get(key)
        if compiled is None:
            from pypto.runtime.compile import compile_with_config
            try:
                compiled = compile_with_config(self._parse(call), config)
            except PyptoError as e:
                raise _float64_hint(self, call, e) or e
            self._cache[key] = compiled
        return compiled

    @property
    def is_host(self) -> bool:
        return getattr(self.level, "name", None) == "HOST"

    def _compile_host(self, call: _Call, config):
        """@pl.jit.host: the distributed program (host orchestrator + the chip @pl.jit functions it dispatches)."""
        from pypto.runtime.compile import compile_program
        from pypto.runtime.distributed import DistributedConfig
        key = self._key(call, config) + (repr(config.distributed_config),)
        compiled = self._cache.get(key)
        if compiled is None:
            dist = config.distributed_config or DistributedConfig(device_ids=[0])
            compiled = compile_program(self._parse(call), output_dir=config.save_kernels_dir,
                                       dump_passes=config.dump_passes, platform=config.platform,
                                       strategy=config.strategy, save_kernels=config.save_kernels,
                                       distributed_config=dist)
            self._cache[key] = compiled
        return compiled

    def lower(self, *args, config=None, **kwargs):
        """The post-pass ir.Program for these arguments (not cached, no artifacts)."""
        from pypto.runtime.compile import lower
        config = _checked_config(config)
        return lower(self._parse(self._bind_for_compile(args, kwargs)), platform=config.platform,
                     strategy=config.strategy)

    def __call__(self, *args, config=None, **kwargs):
        fast = self._cached_for_arrays(args, kwargs, config)
        if fast is not None:                     # every argument a numpy array, this signature seen before
            if current_worker() is None:
                return launch(fast, args, config=config)
            return fast(*args, config=config)
        call = self._bind(args, kwargs)
        compiled = self._compiled(call, _checked_config(config))
        if not kwargs and not call.torch and len(call.args) == len(self.param_names) and \
                all(type(x) is np.ndarray for x in call.args) and not self.is_host and \
                self.func_type is FunctionType.Orchestration:
            try:
                self._by_arrays[self._arrays_key(args, _checked_config(config)) + self._read_globals()] = compiled
                self._last_hit = None
            except TypeError:
                pass
        if current_worker() is not None:         # inside `with ChipWorker(...)`: the worker runs it
            return compiled(*[x for x, a in zip(call.args, call.arrays) if a is not None], config=config)
        return launch(compiled, call.tensors(), config=config, torch=call.torch)

    def _cached_for_arrays(self, args: tuple, kwargs: dict, config):
        """The compiled program of a call whose arguments are all numpy arrays, passed by position, with
        shapes and dtypes seen before (None otherwise): such a call cannot fail binding, and its cache key is
        just the arrays' shapes and dtypes, so the general binding and key are skipped."""
        if kwargs or not self._by_arrays or len(args) != len(self.param_names):
            return None
        if config is None:
            config = default_config()
        elif not isinstance(config, RunConfig):
            return None                          # the general path reports it
        key = self._arrays_key(args, config)
        if key is None:                          # an argument that is not a numpy array
            return None
        key += self._read_globals()
        last = self._last_hit                    # a loop calls with the same shapes again: compare, do not hash
        if last is not None and last[0] == key:
            return last[1]
        try:
            compiled = self._by_arrays.get(key)
        except TypeError:                        # an unhashable option value: the general path
            return None
        if compiled is not None:
            self._last_hit = (key, compiled)
        return compiled

    @staticmethod
    def _arrays_key(args: tuple, config) -> Optional[tuple]:
        """The shortcut's key (without the globals), None when an argument is not exactly a numpy array."""
        # (dtype objects: equal dtypes hash equal, without building `dtype.str` per argument)
        signature = []
        for x in args:
            if type(x) is not np.ndarray:
                return None
            signature.append((x.shape, x.dtype))
        # the options compile_key() spells as strings, read raw (equal values spell equal keys)
        return (tuple(signature), config.platform, config.strategy, config.memory_planner, config.dump_passes,
                config.save_kernels, config.save_kernels_dir)

    def clear_cache(self) -> None:
        self._cache.clear()
        self._by_arrays.clear()
        self._last_hit = None

    def __repr__(self) -> str:
        return f"<pl.jit {self.func_type.name} function {self.__name__}>"


class _CallSiteSpecializer:
    """Stands in for a sub-kernel while its caller is parsed: each call site gets the sub-kernel
    specialized for its arguments — bare `pl.Tensor` params take the argument's shape and
    dtype, Python numbers become specialization constants — one Function per distinct
    signature (named `f`, `f_1`, ...), as the reference's specializer does."""

    def __init__(self, dep: "JITFunction", env: dict, made: list):
        self.dep = dep
        self.env = env
        self.made = made
        self.by_key: dict = {}

    def pypto_specialize(self, args: list, kwargs: dict, span):
        from pypto.errors import TypeCheckError
        from pypto.ir.expr import Expr
        from pypto.ir.types import ScalarType
        from pypto.language.parser import parse_function
        dep = self.dep
        try:
            bound = inspect.signature(dep.pyfunc).bind(*args, **kwargs)
        except TypeError as e:
            raise TypeCheckError(f"call of {dep.__name__}: {e}", span) from None
        ann = dep.annotations()
        overrides: dict = {}
        kept: list = []
        key: list = []
        for name, value in bound.arguments.items():
            declared = ann.get(name)
            if isinstance(value, Expr):
                t = value.type
                if isinstance(t, TensorType) and not isinstance(declared, TensorType):
                    overrides[name] = TensorType(list(t.shape), t.dtype)
                elif isinstance(t, ScalarType) and not isinstance(declared, ScalarType):
                    overrides[name] = ScalarType(t.dtype)
                key.append(_type_key(overrides.get(name, t)))
                kept.append(value)
            elif isinstance(value, (bool, int, float)):
                overrides[name] = value
                key.append(("const", type(value).__name__, value))
            else:
                raise TypeCheckError(f"call of {dep.__name__}: argument '{name}' must be a tensor, a scalar or a "
                                     f"number, got {type(value).__name__}", span)
        key_t = tuple(key)
        fn = self.by_key.get(key_t)
        if fn is None:
            fn = parse_function(dep.pyfunc, func_type=dep.func_type, level=dep.level, role=None, attrs=None,
                                overrides=overrides, extra_globals=self.env, auto_scope=dep.auto_scope)
            if self.by_key:
                fn = fn.replace(name=f"{fn.name}_{len(self.by_key)}")
            self.by_key[key_t] = fn
            self.made.append(fn)
        return fn, kept


_MISSING = object()
_CONSTANT_TYPES = (int, float, bool, str, bytes, complex, type(None))


# instructions whose name is an attribute's (`pl.add`: `add`), never a global or closure variable
_ATTRIBUTE_OPS = frozenset({"LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR", "IMPORT_FROM",
                            "LOAD_SUPER_ATTR"})


def _code_names(code) -> set:
    """Global and free names a function's code (and the code nested in it) may read: its free variables and
    every name an instruction uses other than as an attribute name (those cannot read a global, and
    `_read_globals` looks each name up on every call)."""
    names = set(code.co_freevars)
    for ins in dis.get_instructions(code):
        if ins.opcode in dis.hasname and ins.opname not in _ATTRIBUTE_OPS:
            names.add(ins.argval)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _code_names(const)
    return names


def _global_readers(fn) -> list:
    """(function name, name, closure cell or None, globals dict) per name `fn`'s code reads, in name order:
    what `_read_globals` looks up at each call (a closure variable shadows a module global)."""
    f = fn.pyfunc
    cells = dict(zip(f.__code__.co_freevars, f.__closure__ or ()))
    return [(fn.__name__, name, cells.get(name), f.__globals__) for name in sorted(_code_names(f.__code__))]


_PLAIN_CONSTANT_TYPES = frozenset(_CONSTANT_TYPES)
_NEVER_CONSTANT_TYPES = frozenset({types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type})  # `pl`, helpers
_CONSTANT_CLASSES = _CONSTANT_TYPES + (enum.Enum, np.generic)


def _is_constant(value) -> bool:
    if isinstance(value, (tuple, frozenset)):
        return all(_is_constant(v) for v in value)
    return isinstance(value, _CONSTANT_CLASSES)


def _float64_hint(fn, call, error):
    """A compile error while float64 arrays (numpy's default) were passed: point at the call and the
    parameter, and suggest the conversion, instead of blaming a line of the kernel."""
    names = [name for name, arr in zip(fn.param_names, call.arrays) if arr is not None and arr.dtype == np.float64]
    if not names:
        return None
    which = ", ".join(f"'{n}'" for n in names)
    new = TypeCheckError(f"{fn.__name__}(): parameter{'s' if len(names) > 1 else ''} {which} got float64 arrays "
                         "(numpy's default dtype), and the kernel does not compile for them", user_call_span(),
                         hint=f"pass {names[0]}.astype(np.float32) (or the dtype the kernel is written for)",
                         note=f"the compiler said: {error}")
    new.__cause__ = error
    return new


def _type_key(t) -> tuple:
    """A specialization key for an argument type: its structural hash plus the symbolic dims it names (by
    identity, since the hash numbers Vars by position and would equate two different dynamic dims)."""
    from pypto.ir.equality import structural_hash
    from pypto.ir.expr import ConstInt, Var
    from pypto.ir.visitor import collect
    dims: list = []
    for d in getattr(t, "shape", ()):
        if isinstance(d, Var):
            dims.append(d)
        elif not isinstance(d, ConstInt):
            dims.extend(collect(d, lambda n: isinstance(n, Var)))
    return structural_hash(t), tuple(dims)


def _reject_kernel_options(decorator: str, unknown: dict, known: tuple) -> None:
    """A kernel decorator's unknown keyword (task graph: auto_scope= has no orchestration body to apply to)."""
    if "auto_scope" in unknown:
        raise TypeCheckError(f"{decorator} takes no auto_scope=: the kernel is outlined on its own, so it has no "
                             "orchestration body for a runtime scope", user_call_span(),
                             hint="put auto_scope=False on the @pl.jit entry or a @pl.jit.inline helper")
    if unknown:
        reject_unknown_options(decorator, unknown, known)


class _JitDecorator:
    """`pl.jit` and its variants: `@pl.jit`, `@pl.jit(auto_scope=False)`, `@pl.jit.incore`, ..."""

    def __call__(self, fn=None, *, auto_scope: bool = True, **unknown):
        if unknown:
            reject_unknown_options("@pl.jit", unknown, ("auto_scope",))
        if fn is None:
            return lambda f: JITFunction(f, auto_scope=auto_scope)
        return JITFunction(fn, auto_scope=auto_scope)

    def incore(self, fn=None, *, level=None, **unknown):
        _reject_kernel_options("@pl.jit.incore", unknown, ("level",))
        from pypto.ir.enums import Level
        func_type = {None: FunctionType.InCore, Level.AIC: FunctionType.AIC, Level.AIV: FunctionType.AIV}.get(level)
        if func_type is None:
            raise UnsupportedError(f"@pl.jit.incore(level={level!r}): only AIC / AIV levels are accepted")
        make = functools.partial(JITFunction, func_type=func_type)
        return make(fn) if fn is not None else make

    def inline(self, fn=None, *, auto_scope: bool = True):
        make = functools.partial(JITFunction, func_type=FunctionType.Inline, auto_scope=auto_scope)
        return make(fn) if fn is not None else make

    def opaque(self, fn=None, **unknown):
        _reject_kernel_options("@pl.jit.opaque", unknown, ())
        make = functools.partial(JITFunction, func_type=FunctionType.Opaque)
        return make(fn) if fn is not None else make

    def host(self, fn=None, *, auto_scope: bool = True, **options):
        """`@pl.jit.host`: a distributed HOST orchestrator; it discovers the plain @pl.jit chip functions it
        dispatches with `device=r` (run with RunConfig(distributed_config=DistributedConfig(device_ids=[...])))."""
        from pypto.ir.enums import Level, Role
        if "level" in options:
            raise TypeCheckError("@pl.jit.host does not take level= (it is always pl.Level.HOST)", user_call_span())
        if options:
            reject_unknown_options("@pl.jit.host", options, ("auto_scope",))
        make = functools.partial(JITFunction, func_type=FunctionType.Opaque, level=Level.HOST, role=Role.Orchestrator,
                                 auto_scope=auto_scope)
        return make(fn) if fn is not None else make

    def extern(self, fn=None, **_options):
        raise UnsupportedError("@pl.jit.extern (hand-written C++ kernels) cannot run on the simulator")


jit = _JitDecorator()
