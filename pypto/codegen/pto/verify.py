"""A structural check of emitted `.pto` text: balanced brackets and SSA values defined before use.

    problems = check_well_formed(text)      # [] when well formed, else "line 12: %x used before ..."

Not an MLIR parser: it knows the shapes codegen emits (`%a, %b = op ...`, region headers
ending in `{` with their region-local values — `scf.for %iv`, `iter_args(%a = %init)`,
`scf.while (%a = %init)`, `^bb0(%a: T)`, func params — and `}` / `} else {` / `} do {`), which
is enough to catch a value used outside the region that defines it or before its definition.
"""

from __future__ import annotations

import re

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_SSA = re.compile(r"%[A-Za-z0-9_.$-]+")
_RESULTS = re.compile(r"^((?:%[A-Za-z0-9_.$-]+)(?:\s*,\s*%[A-Za-z0-9_.$-]+)*)\s*=\s*(.*)$")
_PAIRS = re.compile(r"(%[A-Za-z0-9_.$-]+)\s*=\s*(%[A-Za-z0-9_.$-]+)")
_PAIRS_OPEN = {"{": "}", "(": ")", "[": "]"}


def _balance(text: str) -> list:
    stack, problems = [], []
    for n, line in enumerate(text.splitlines(), 1):
        for ch in _STRING.sub('""', line):
            if ch in _PAIRS_OPEN:
                stack.append((ch, n))
            elif ch in _PAIRS_OPEN.values():
                if not stack or _PAIRS_OPEN[stack[-1][0]] != ch:
                    problems.append(f"line {n}: unbalanced '{ch}'")
                    return problems
                stack.pop()
    problems += [f"line {n}: '{ch}' is never closed" for ch, n in stack]
    return problems


def _region_locals(rest: str) -> tuple:
    """(values the region header defines for its body, the header text with those definitions removed)."""
    local = []
    m = re.match(r"\s*scf\.for\s+(%[\w.$-]+)\s*=", rest)
    if m:
        local.append(m.group(1))
        rest = rest[:m.start(1)] + rest[m.end(1):]
    for key in ("iter_args(", "scf.while ("):
        i = rest.find(key)
        if i >= 0:
            j = rest.find(")", i)
            inner = rest[i + len(key):j]
            local += [a for a, _ in _PAIRS.findall(inner)]
            rest = rest[:i] + " ".join(b for _, b in _PAIRS.findall(inner)) + rest[j + 1:]
    if rest.lstrip().startswith("func.func"):
        local += re.findall(r"(%[\w.$-]+)\s*:", rest)
        rest = ""
    return local, rest


def check_well_formed(text: str) -> list:
    problems = _balance(text)
    if problems:
        return problems
    scopes: list = [set()]
    pending: list = []                    # per open region: the results its header defines afterwards

    def defined(name: str) -> bool:
        return any(name in s for s in scopes)

    def define(name: str, n: int, scope: set) -> None:
        if defined(name):
            problems.append(f"line {n}: {name} is defined twice")
        scope.add(name)

    def use(names, n: int) -> None:
        for name in names:
            if not defined(name):
                problems.append(f"line {n}: {name} used before its definition")

    for n, raw in enumerate(text.splitlines(), 1):
        line = _STRING.sub('""', raw).strip()
        if not line:
            continue
        if line.startswith("}"):
            results = pending.pop()
            scopes.pop()
            if line.endswith("{"):                 # } else {   /   } do {
                scopes.append(set())
                pending.append(results)
            else:
                for r in results:
                    define(r, n, scopes[-1])
            continue
        if line.startswith("^bb"):
            for name in _SSA.findall(line):
                define(name, n, scopes[-1])
            continue
        m = _RESULTS.match(line)
        results, rest = (_SSA.findall(m.group(1)), m.group(2)) if m else ([], line)
        if rest.endswith("{"):
            local, header = _region_locals(rest)
            use(_SSA.findall(header), n)
            scopes.append(set())
            for name in local:
                define(name, n, scopes[-1])
            pending.append(results)
            continue
        use(_SSA.findall(rest), n)
        for r in results:
            define(r, n, scopes[-1])
    return problems
