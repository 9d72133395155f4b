"""A validator for the subset of JSON Schema that docs/_static/bias-card.schema.json uses: type (one or a
list), required, properties, additionalProperties (false or a schema), items, enum, const, minimum,
maximum, minItems, pattern. Any other keyword is refused, so the schema cannot silently use one this
validator ignores."""

import re

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
_ANNOTATIONS = {"$schema", "$id", "title", "description"}
_KNOWN = _ANNOTATIONS | {"type", "required", "properties", "additionalProperties", "items", "enum", "const",
                         "minimum", "maximum", "minItems", "pattern"}


def _is(value, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[kind])


def errors(value, schema: dict, where: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (empty: valid), each with its JSON path."""
    unknown = set(schema) - _KNOWN
    if unknown:
        raise ValueError(f"{where}: keywords this validator does not implement: {sorted(unknown)}")
    kinds = schema.get("type")
    if kinds is not None and not any(_is(value, k) for k in ([kinds] if isinstance(kinds, str) else kinds)):
        return [f"{where}: {type(value).__name__}, expected {kinds}"]
    out = []
    if "const" in schema and value != schema["const"]:
        out.append(f"{where}: {value!r}, expected {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{where}: {value!r}, expected one of {schema['enum']}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{where}: {value} < {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{where}: {value} > {schema['maximum']}")
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        out.append(f"{where}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, list):
        out += _array_errors(value, schema, where)
    if isinstance(value, dict):
        out += _object_errors(value, schema, where)
    return out


def _array_errors(value: list, schema: dict, where: str) -> list[str]:
    out = []
    if len(value) < schema.get("minItems", 0):
        out.append(f"{where}: {len(value)} items, expected at least {schema['minItems']}")
    for i, item in enumerate(value):
        out += errors(item, schema.get("items", {}), f"{where}[{i}]")
    return out


def _object_errors(value: dict, schema: dict, where: str) -> list[str]:
    out = [f"{where}: no {key!r}" for key in schema.get("required", ()) if key not in value]
    props, extra = schema.get("properties", {}), schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in props:
            out += errors(item, props[key], f"{where}.{key}")
        elif extra is False:
            out.append(f"{where}: unexpected key {key!r}")
        elif isinstance(extra, dict):
            out += errors(item, extra, f"{where}.{key}")
    return out
