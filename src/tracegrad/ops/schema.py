"""Operator schemas with alias annotations, parsed from PyTorch's schema language.

``add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)`` tells that ``self`` is
written in place and returned; ``Tensor(a) self -> Tensor(a)`` marks a view. Functionalization and the
registry's derived variants read these annotations (seed 003).
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field


class SchemaKind(enum.Enum):
    functional = "functional"
    inplace = "inplace"
    out = "out"
    mutable = "mutable"


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # e.g. "Tensor", "Tensor?", "Tensor[]", "int[1]?", "Scalar", "bool"
    default: object = None
    has_default: bool = False
    kwarg_only: bool = False
    alias: str | None = None  # alias set, e.g. "a"
    is_write: bool = False

    @property
    def is_tensor(self) -> bool:
        return self.type in ("Tensor", "Tensor?")

    @property
    def is_tensor_list(self) -> bool:
        return self.type.startswith("Tensor[]") or self.type.startswith("Tensor?[]")


@dataclass(frozen=True)
class Return:
    type: str
    name: str | None = None
    alias: str | None = None
    is_write: bool = False


@dataclass
class Schema:
    name: str
    overload: str
    params: tuple[Param, ...]
    returns: tuple[Return, ...]
    text: str = field(repr=False, default="")

    @property
    def full_name(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def kind(self) -> SchemaKind:
        writes = [p for p in self.params if p.is_write]
        if not writes:
            return SchemaKind.functional
        if any(p.kwarg_only for p in writes) and all(p.kwarg_only for p in writes):
            return SchemaKind.out
        if len(writes) == 1 and writes[0].name == "self" and self.name.endswith("_"):
            return SchemaKind.inplace
        return SchemaKind.mutable

    @property
    def is_view(self) -> bool:
        return any(r.alias and not r.is_write for r in self.returns)

    @property
    def positional(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if not p.kwarg_only)

    def signature(self) -> str:
        """The schema without names of variants, used to group functional/inplace/out forms."""
        base = self.name[:-1] if self.name.endswith("_") else self.name
        args = ", ".join(p.type for p in self.params if not p.is_write or p.name == "self")
        return f"{base}({args})"

    def __str__(self) -> str:
        return self.text


def _parse_type_and_alias(tok: str) -> tuple[str, str | None, bool]:
    if "(" in tok:
        base, rest = tok.split("(", 1)
        alias = rest.rstrip(")")
        rest_suffix = ""
        if ")" in rest:
            alias, rest_suffix = rest.split(")", 1)
        write = alias.endswith("!")
        return base + rest_suffix, alias.rstrip("!"), write
    return tok, None, False


def _split_top(s: str) -> list[str]:
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def _parse_default(text: str):
    mapping = {"None": None, "True": True, "False": False, "Mean": "mean", "contiguous_format": None}
    if text in mapping:
        return mapping[text]
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return tuple(_parse_default(x.strip()) for x in inner.split(",")) if inner else ()
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _split_arrow(text: str) -> tuple[str, str]:
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "-" and depth == 0 and text[i:i + 2] == "->":
            return text[:i], text[i + 2:]
    return text, ""


def parse_schema(text: str) -> Schema:
    head, ret = _split_arrow(text)
    name_part, _, args_part = head.strip().partition("(")
    args_part = args_part.rstrip().removesuffix(")")
    name, _, overload = name_part.partition(".")
    params: list[Param] = []
    kwarg_only = False
    for raw in _split_top(args_part):
        if raw == "*":
            kwarg_only = True
            continue
        decl, _, default = raw.partition("=")
        type_tok, pname = decl.strip().rsplit(" ", 1)
        ptype, alias, write = _parse_type_and_alias(type_tok.strip())
        params.append(Param(pname, ptype, _parse_default(default.strip()) if default else None,
                            bool(default), kwarg_only, alias, write))
    ret = ret.strip()
    if ret.startswith("(") and ret.endswith(")"):
        ret_items = _split_top(ret[1:-1])
    else:
        ret_items = [ret] if ret and ret != "()" else []
    returns = []
    for item in ret_items:
        bits = item.split()
        rtype, alias, write = _parse_type_and_alias(bits[0])
        returns.append(Return(rtype, bits[1] if len(bits) > 1 else None, alias, write))
    return Schema(name, overload, tuple(params), tuple(returns), text)
