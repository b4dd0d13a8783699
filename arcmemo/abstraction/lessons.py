"""Lessons as a model writes them: a YAML list of situation/suggestion items.

Read by the ``oe`` memory format and by the pitfall write.
"""

from __future__ import annotations

from pydantic import ValidationError

from arcmemo.memory.schema import Lesson
from arcmemo.models.structured import OutputError, load_yaml_block


def parse_lessons(text: str) -> list[Lesson]:
    """Lessons of a model answer; every item must have a situation and a suggestion."""
    data = load_yaml_block(text)
    if isinstance(data, dict) and isinstance(data.get("lessons"), list):
        data = data["lessons"]
    if not isinstance(data, list) or not data:
        raise OutputError("expected a non-empty YAML list of {situation, suggestion} items")
    lessons, errors = [], []
    for number, item in enumerate(data, 1):
        if not isinstance(item, dict):
            errors.append(f"item {number}: expected a mapping with situation and suggestion")
            continue
        fields = {str(k).lower(): v for k, v in item.items()}
        try:
            lessons.append(
                Lesson(
                    situation=str(fields.get("situation") or ""),
                    suggestion=str(fields.get("suggestion") or ""),
                )
            )
        except ValidationError:
            errors.append(f"item {number}: situation and suggestion must both be non-empty")
    if errors:
        raise OutputError("; ".join(errors))
    return lessons
