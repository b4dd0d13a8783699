"""Synthetic memories of any size, shaped like grown ARC memories (benchmarks and tests).

Deterministic for a given size and seed: structures and routines in the proportions of
the paper's memory, routine subtypes that are callable types (so higher-order routines
relate to the routines that fill their parameters), typed parameters, cues and
implementation notes of realistic length, and a usage distribution in which a few
concepts are established (seeds, or used by two or more tasks).
"""

from __future__ import annotations

import itertools
import random

from arcmemo.memory.schema import (
    Concept,
    Lesson,
    Memory,
    Parameter,
    Provenance,
    TypeDef,
    concept_id,
)

CALLABLE_TYPES = {
    "selection criteria": "Callable[[object], bool]",
    "stopping criteria": "Callable[[object, grid], bool]",
    "color scheme": "Callable[[object], color]",
    "splitting scheme": "Callable[[grid], list[grid]]",
    "color selection": "Callable[[grid], color]",
    "object transform": "Callable[[object], object]",
}
PLAIN_TYPES = {
    "color": "int",
    "grid": "list[list[color]]",
    "position": "tuple[int, int]",
    "direction": "Literal['up', 'down', 'left', 'right']",
}


def _words(text: str) -> list[str]:
    return text.split()


_VALUE_TYPES = ["grid", "object", "list[object]", "color", "direction", "position", "int"]
_VERBS = _words(
    "recolor fill extract move rotate reflect tile crop scale count sort filter group "
    "split merge draw outline connect align stack shift mirror flood trace mask select "
    "match compare extend shrink grow repeat center swap invert erase copy project cluster "
    "pair"
)
_QUALIFIERS = _words(
    "largest smallest enclosed isolated touching diagonal vertical horizontal symmetric "
    "repeated framed nested adjacent scattered dense sparse bordered hollow solid striped "
    "checkered central corner edge inner outer colored uniform noisy partial"
)
_NOUNS = _words(
    "object region line block pixel shape frame border cell row column pattern grid "
    "segment cluster path corner stripe square rectangle cross ring dot tile bar mark "
    "island cavity gap"
)
_WORDS = _words(
    "the of each every cell color object grid where when from into along with most least "
    "same other shape size count border region pattern output input pixel line"
)


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words)).capitalize() + "."


def _names(rng: random.Random, size: int) -> list[str]:
    combos = list(itertools.product(_VERBS, _QUALIFIERS, _NOUNS))
    if size > len(combos):
        raise ValueError(f"at most {len(combos)} synthetic concepts, not {size}")
    rng.shuffle(combos)
    names: list[str] = []
    seen: set[str] = set()
    for verb, qualifier, noun in combos:
        name = f"{verb} {qualifier} {noun}"
        if concept_id(name) not in seen:
            seen.add(concept_id(name))
            names.append(name)
        if len(names) == size:
            break
    return names


def _parameters(rng: random.Random, routine: bool) -> list[Parameter]:
    params = [
        Parameter(name=f"arg{i}", type=rng.choice(_VALUE_TYPES), description=_sentence(rng, 6))
        for i in range(rng.randint(1, 2 if routine else 1))
    ]
    if routine and rng.random() < 0.35:  # a higher-order routine
        kind = rng.choice(sorted(CALLABLE_TYPES))
        typed = f"list[{kind}]" if rng.random() < 0.3 else kind
        params.append(Parameter(name="rule", type=typed, description=_sentence(rng, 6)))
    return params


def _concept(rng: random.Random, name: str, index: int) -> Concept:
    routine = rng.random() < 0.75
    subtype = None
    if routine:
        roll = rng.random()
        subtype = (
            "grid manipulation"
            if roll < 0.35
            else "intermediate"
            if roll < 0.65
            else rng.choice(sorted(CALLABLE_TYPES))
        )
    uses = rng.choices([1, 2, 3, 5], weights=[70, 20, 7, 3])[0]
    sources = ["seed"] if index < 20 else [f"task{index:05d}-{k}" for k in range(uses)]
    return Concept(
        name=name,
        kind="routine" if routine else "structure",
        routine_subtype=subtype,
        description=_sentence(rng, rng.randint(8, 16)),
        parameters=_parameters(rng, routine),
        output_type=rng.choice(_VALUE_TYPES) if routine else None,
        cues=[_sentence(rng, rng.randint(5, 9)) for _ in range(rng.randint(1, 2))],
        implementation=[_sentence(rng, rng.randint(5, 9)) for _ in range(rng.randint(0, 2))],
        provenance=Provenance(sources=sources, authors=["synthetic"]),
    )


def synthetic_memory(size: int, *, seed: int = 0, lessons: int = 0) -> Memory:
    """A memory of ``size`` concepts (and ``lessons`` lessons), the same for the same
    arguments."""
    rng = random.Random(seed)
    types = [TypeDef(name=n, definition=d) for n, d in {**PLAIN_TYPES, **CALLABLE_TYPES}.items()]
    concepts = [_concept(rng, name, i) for i, name in enumerate(_names(rng, size))]
    return Memory(
        domain="arc",
        types=types,
        concepts=concepts,
        lessons=[
            Lesson(situation=_sentence(rng, 8), suggestion=_sentence(rng, 10))
            for _ in range(lessons)
        ],
    )
