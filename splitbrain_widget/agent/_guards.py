"""The run's guards: one pydantic-ai capability around every model request.

Before a request, the history is compacted if it nears the context window; after one, calls cut
off by the length limit are marked (the toolset refuses them) and calls to unknown tools go to the
loop detector; on a provider error, the request is retried with backoff (skippable), then the chain
moves to its next model.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from pydantic_ai import ModelAPIError, ModelHTTPError, ModelResponse, RetryModelRequest, RunContext, ToolCallPart
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ModelAuthenticationError, ModelQuotaExceededError
from pydantic_ai.models import ModelRequestContext

from . import _retry
from ._events import Fallback, RetryWait
from ._history import compact
from ._model_chain import model_label
from ._run_state import RunState, RunStopped
from ._tools import BY_NAME


class Guards(AbstractCapability[Any]):
    """Retry with backoff, fallback, truncation and compaction, around every model request."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self.state.retries_this_step = 0
        compacted = compact(ctx.messages, self.state.window)
        if compacted is not None:
            ctx.messages[:] = compacted
            request_context.messages[:] = compacted
            self.state.compactions += 1
        return request_context

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        if response.finish_reason == "length":
            for part in calls:
                self.state.truncated_ids.add(part.tool_call_id)
                if isinstance(part.args, str):  # cut-off JSON: make it parse, so the call reaches our refusal
                    try:
                        json.loads(part.args)
                    except ValueError:
                        part.args = {}
        known = set(BY_NAME)
        for part in calls:
            if part.tool_name not in known:
                verdict = self.state.loops.check_unknown(part.tool_name, known)
                if verdict.stop:
                    self.state.stop_reason = verdict.message
                    raise RunStopped(verdict.message)
        return response

    async def on_model_request_error(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, error: Exception
    ) -> ModelResponse:
        state = self.state
        chain = state.chain
        if not isinstance(error, ModelAPIError):
            raise error
        status = error.status_code if isinstance(error, ModelHTTPError) else None
        model = model_label(chain.wrapped) if chain else "model"
        hopeless = isinstance(error, ModelQuotaExceededError | ModelAuthenticationError) or status in (401, 403)
        if not hopeless and _retry.is_retryable(status) and state.retries_this_step < state.max_retries:
            headers = getattr(error, "headers", None) or {}
            delay, source = _retry.retry_delay(
                state.retries_this_step, headers, getattr(error, "body", None), state.backoff
            )
            hint = getattr(error, "retry_after", None)
            if source == "backoff" and hint is not None:  # pydantic-ai parsed a hint we did not see
                delay, source = min(float(hint), _retry.MAX_WAIT_S), "provider"
            state.retries_this_step += 1
            if state.skip_wait is not None:
                state.skip_wait.clear()  # before the event, so a skip asked for while it is shown counts
            state.emit(RetryWait(delay, source, state.retries_this_step, model, status))
            await self._wait(delay)
            raise RetryModelRequest()
        if chain is not None and chain.has_next():
            before, after = chain.advance()
            state.retries_this_step = 0
            reason = f"{type(error).__name__}" + (f" (HTTP {status})" if status else "")
            state.emit(Fallback(before, after, reason))
            raise RetryModelRequest()
        raise error

    async def _wait(self, seconds: float) -> None:
        skip = self.state.skip_wait
        if skip is None:
            await asyncio.sleep(seconds)
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(skip.wait(), seconds)
