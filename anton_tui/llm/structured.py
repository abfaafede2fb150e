"""Getting typed data out of a model: a pydantic model becomes a tool the model is made to call.

`build_structured_tool` turns a model class (or `list[Model]`, wrapped in an `items` object)
into a tool definition; `unwrap_structured_response` validates the tool's arguments back into
the class; `read_structured_answer` says what went wrong when an answer cannot be used, so the
caller can retry once with a firmer instruction.
"""

from __future__ import annotations

import re
import typing
from typing import Any

from anton_tui.llm.events import LLMResponse


def build_structured_tool(schema: Any) -> tuple[dict[str, Any], type, bool]:
    """Return `(tool_dict, validator_class, is_list)` for a pydantic model or `list[Model]`."""
    from pydantic import BaseModel, create_model

    is_list = typing.get_origin(schema) is list
    inner = typing.get_args(schema)[0] if is_list else schema
    if not (isinstance(inner, type) and issubclass(inner, BaseModel)):
        raise TypeError(f"structured output needs a pydantic model or list[Model], got {schema!r}")
    if is_list:
        name = _tool_name(f"{inner.__name__}_array")
        validator: type[BaseModel] = create_model(name, items=(list[inner], ...))  # type: ignore[valid-type]
        description = f"Return the result as a list of {inner.__name__} objects in `items`."
    else:
        name = _tool_name(inner.__name__)
        validator = inner
        description = f"Return the result as a {inner.__name__} object."
    own_doc = (inner.__dict__.get("__doc__") or "").strip()
    if own_doc:
        description = f"{description} {own_doc}"
    tool = {"name": name, "description": description, "input_schema": validator.model_json_schema()}
    return tool, validator, is_list


def unwrap_structured_response(tool_input: dict[str, Any], validator: type, is_list: bool) -> Any:
    """Validate a tool call's arguments; raises `pydantic.ValidationError` when they do not fit."""
    value = validator.model_validate(tool_input)  # type: ignore[attr-defined]
    return list(value.items) if is_list else value


def read_structured_answer(
    response: LLMResponse, tool_name: str, validator: type, is_list: bool
) -> tuple[Any, str | None]:
    """`(value, None)` when the answer holds a valid call of `tool_name`, else `(None, what went wrong)`."""
    from pydantic import ValidationError

    cut_off = response.stop_reason == "max_tokens"
    calls = [call for call in response.tool_calls if call.name == tool_name] or response.tool_calls[:1]
    if not calls:
        if cut_off:
            return None, "the answer was cut off at the token limit before the tool call"
        return None, f"the model answered with text instead of calling the {tool_name} tool"
    call = calls[0]
    if call.parse_error:
        if cut_off:
            return None, "the tool call was cut off at the token limit"
        return None, f"the tool call's {call.parse_error}"
    try:
        return unwrap_structured_response(call.input, validator, is_list), None
    except ValidationError as exc:
        return None, f"the tool call did not match the schema ({_summarise(exc)})"


def firmer_instruction(tool_name: str, problem: str) -> str:
    return (
        f"Your previous answer could not be used: {problem}. Respond only by calling the {tool_name} tool "
        "once, with arguments that match its input schema exactly. Do not write any other text."
    )


def _summarise(exc: Any, limit: int = 3) -> str:
    parts = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(p) for p in error.get("loc", ())) or "input"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    more = len(exc.errors()) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _tool_name(raw: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", raw)[:64] or "result"
