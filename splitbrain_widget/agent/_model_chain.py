"""The model chain: the primary model and its fallbacks, and the label each model goes by."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager

from pydantic_ai.models import Model
from pydantic_ai.models.wrapper import WrapperModel


def model_label(model: Model) -> str:
    """The name a model goes by in events and results, such as ``"openai:gpt-4o"`` or ``"ollama:qwen2.5"``."""
    label = getattr(model, "_splitbrain_label", None)
    if isinstance(label, str):
        return label
    name = getattr(model, "model_name", None) or type(model).__name__
    system = getattr(model, "system", "") or ""
    if not system or system == "function" or system in str(name):
        return str(name)
    return f"{system}:{name}"


class StickyChain(WrapperModel):
    """The primary model and its fallbacks; once moved to a fallback, the chain stays there."""

    def __init__(self, models: Sequence[Model]) -> None:
        super().__init__(models[0])
        self.models = list(models)
        self.index = 0

    def _refresh_http_client(self) -> None:
        # Each ask() runs on a fresh event loop: every model of the chain, not only the active one,
        # must drop HTTP clients bound to the previous loop, or a later fallback fails.
        for model in self.models:
            model._refresh_http_client()

    @asynccontextmanager
    async def _run_scope(self) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for model in self.models:
                await stack.enter_async_context(model._run_scope())
            yield

    def has_next(self) -> bool:
        return self.index + 1 < len(self.models)

    def advance(self) -> tuple[str, str]:
        before = model_label(self.wrapped)
        self.index += 1
        self.wrapped = self.models[self.index]
        return before, model_label(self.wrapped)
