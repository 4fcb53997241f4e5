"""The canonical case id: one grammar, rendered by :func:`render` and parsed by :func:`parse`.

    case-id  = contract "/" backend "/" param *( "," param )
    param    = key "=" value
    contract = name *( "." name )        ; e.g. block.load
    key      = [a-z][a-z0-9_]*
    value    = 1*[A-Za-z0-9_.+-]          ; ints are written in decimal, bools as true/false

Example: ``block.load/numba/dtype=int32,block=16x8,ipt=4,alg=striped,valid=threads+1,oob=none,offset=zero``.
The id keys the journal, expectations, JUnit, sanitizer attribution and history.
"""

from __future__ import annotations

import re

from harness.errors import CaseIdError

Value = str | int | bool

_NAME = r"[a-z][a-z0-9_]*"
_CONTRACT = re.compile(rf"^{_NAME}(?:\.{_NAME})+$")
_BACKEND = re.compile(rf"^{_NAME}$")
_KEY = re.compile(rf"^{_NAME}$")
_VALUE = re.compile(r"^[A-Za-z0-9_.+-]+$")
_PARAM = rf"{_NAME}=[A-Za-z0-9_.+-]+"
#: A whole id in canonical form but for repeated keys: one match instead of a render per parse, which the
#: readers of a full run's journals (millions of ids) would pay for each id.
_ID = re.compile(rf"({_NAME}(?:\.{_NAME})+)/({_NAME})/({_PARAM}(?:,{_PARAM})*)")


def _value_text(key: str, value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    if not _VALUE.match(text):
        raise CaseIdError(f"parameter {key}={text!r}: a value may hold only letters, digits and _ . + -")
    return text


def render(contract: str, backend: str, params: list[tuple[str, Value]]) -> str:
    """The id of one case; params in the contract's axis order."""
    if not _CONTRACT.match(contract):
        raise CaseIdError(f"contract name {contract!r} does not match {_CONTRACT.pattern}")
    if not _BACKEND.match(backend):
        raise CaseIdError(f"backend name {backend!r} does not match {_BACKEND.pattern}")
    seen: set[str] = set()
    parts = []
    for key, value in params:
        if not _KEY.match(key) or key in seen:
            raise CaseIdError(f"parameter key {key!r} is malformed or repeated")
        seen.add(key)
        parts.append(f"{key}={_value_text(key, value)}")
    if not parts:
        raise CaseIdError(f"{contract}/{backend}: a case id needs at least one parameter")
    return f"{contract}/{backend}/{','.join(parts)}"


def parse(case_id: str) -> tuple[str, str, list[tuple[str, str]]]:
    """Split an id into (contract, backend, params); values stay text (the contract types them).

    >>> parse("block.store/rustfatbin/dtype=uint8,ipt=3")
    ('block.store', 'rustfatbin', [('dtype', 'uint8'), ('ipt', '3')])
    """
    match = _ID.fullmatch(case_id)
    if match is None:
        raise CaseIdError(f"{case_id!r}: not a canonical case id (contract/backend/key=value,...)")
    contract, backend, param_text = match.groups()
    params = [(key, value) for key, _, value in (part.partition("=") for part in param_text.split(","))]
    if len({key for key, _ in params}) != len(params):
        raise CaseIdError(f"{case_id!r}: a parameter key is repeated")
    return contract, backend, params


def head(case_id: str) -> tuple[str, str]:
    """The contract and backend of an id, checked as :func:`parse` checks it but for repeated keys, without
    splitting its parameters (readers that count millions of verdicts by contract and backend need no more).

    >>> head("block.store/rustfatbin/dtype=uint8,ipt=3")
    ('block.store', 'rustfatbin')
    """
    match = _ID.fullmatch(case_id)
    if match is None:
        raise CaseIdError(f"{case_id!r}: not a canonical case id (contract/backend/key=value,...)")
    return match[1], match[2]
