"""The run's guards: one pydantic-ai capability around every model request.

Before each attempt at a request, the history is compacted if the request (instructions and tool
schemas counted) nears the context window; after one, the server's own token count corrects the
estimate, calls cut off by the length limit are marked (the toolset refuses them) and calls to
unknown tools go to the loop detector. On a context overflow the history is compacted harder and the
request tried once more; on another provider error, the request is retried with backoff
(skippable), then the chain moves to its next model.
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
from ._history import MIN_CHARS_PER_TOKEN, compact, estimate_tokens, overhead_tokens
from ._model_chain import model_label
from ._overflow import Overflow, overflow_of
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
        return request_context

    async def prepare_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        state = self.state
        state.overhead = overhead_tokens(request_context.model_request_parameters, state.chars_per_token)
        if state.refit:  # the history compacted after an overflow: this attempt sends it
            state.refit = False
            request_context.messages[:] = list(ctx.messages)
        compacted = compact(
            request_context.messages,
            state.window,
            overhead=state.overhead,
            chars_per_token=state.chars_per_token,
            reserve=state.reserve,
        )
        if compacted is not None:
            ctx.messages[:] = compacted
            request_context.messages[:] = compacted
            state.compactions += 1
        state.sent_chars = int(
            (state.overhead + estimate_tokens(request_context.messages, state.chars_per_token)) * state.chars_per_token
        )
        return request_context

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        counted = response.usage.input_tokens
        if counted > 0 and self.state.sent_chars / counted < self.state.chars_per_token:
            # the server counts more tokens than we guessed: guess as it counts from now on (never below 2)
            self.state.chars_per_token = max(MIN_CHARS_PER_TOKEN, self.state.sent_chars / counted)
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
        overflow = overflow_of(error)
        if overflow is not None:
            self._refit(ctx, overflow)
            raise RetryModelRequest()
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

    def _refit(self, ctx: RunContext[Any], overflow: Overflow) -> None:
        """Compact the history to its last turn after the server said the request did not fit, learning the
        window and the token count it named; past one refit in a run, or with nothing left to fold, stop."""
        state = self.state
        if overflow.window is not None:
            state.window = min(state.window, overflow.window)
        if overflow.prompt and state.sent_chars:  # count as the server counts, the overhead too
            before = state.chars_per_token
            state.chars_per_token = max(MIN_CHARS_PER_TOKEN, min(before, state.sent_chars / overflow.prompt))
            state.overhead = int(state.overhead * before / state.chars_per_token)
        compacted = None
        if not state.overflowed:
            compacted = compact(
                ctx.messages,
                state.window,
                keep_turns=1,
                overhead=state.overhead,
                chars_per_token=state.chars_per_token,
                force=True,
            )
        state.overflowed = True
        if compacted is None:
            size = f" of {overflow.window} tokens" if overflow.window else ""
            counted = f"the server counted {overflow.prompt}" if overflow.prompt else "about the same"
            message = (
                f"context overflow: this request does not fit the model's context{size} even with the earlier "
                f"conversation compacted (the instructions and tools alone are about {state.overhead} tokens, the "
                f"whole request {counted}); start the server with a larger context or pass a model that has one "
                f"({overflow.message})"
            )
            state.stop_reason = message
            raise RunStopped(message)
        ctx.messages[:] = compacted
        state.refit = True
        state.compactions += 1

    async def _wait(self, seconds: float) -> None:
        skip = self.state.skip_wait
        if skip is None:
            await asyncio.sleep(seconds)
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(skip.wait(), seconds)
