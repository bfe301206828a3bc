"""One training recipe per zoo model, by name, in the order ``lucid models`` lists them."""
from __future__ import annotations

from . import classifiers, density, generative, language, scientific
from .base import Recipe

RECIPES: dict[str, type[Recipe]] = {r.name: r for r in [*classifiers.RECIPES, *language.RECIPES, *generative.RECIPES,
                                                      *density.RECIPES, *scientific.RECIPES]}

__all__ = ["RECIPES", "Recipe"]
