"""The shell-channel tap: the only module that touches ipykernel internals.

While a cell runs, ipykernel handles no incoming comm message on the main thread, so a blocking
call that waits for a browser reply would deadlock. Every ipykernel 7.x receives shell messages on
a dedicated thread (``kernel.shell_channel_thread``) through ``kernel.shell_stream``. We wrap that
stream's receive callback: a ``comm_msg`` for one of our widgets is recognised, its HMAC checked,
handed to the widget's (thread-safe, traitlet-free) handler and dropped; every other message goes
on to ipykernel untouched, as the original frames.

A dropped message never reaches the kernel's dispatcher, so it causes no busy/idle status frames.
The frontend, though, keeps a future per sent message until it sees an idle status for it; we
publish those idle statuses in one batch when the kernel's main loop is next free (never during a
running cell, so the kernel indicator stays honest and the hot path stays short).

On ipykernel 7.0-7.3 the tap also mends a kernel bug that strands requests (see
:func:`_send_replies_through_stream`): those kernels write each shell reply raw on the socket the
shell stream reads, and a request that arrives meanwhile can sit unread until another client
connects, so a cell never starts (ipython/ipykernel#1554, fixed in 7.4 by #1529).

Verified against ipykernel 7.0.1, 7.3.0 and 7.4.0 (same attribute names in all three).

Kernels before 7 (6.x, 5.x, and the hosted runtimes built on them, such as Colab's) have no
shell-channel thread: their main thread reads the shell stream, on the asyncio loop that also runs
awaited cells. There the tap wraps the same receive callback on that loop (:func:`replies_on_main_loop`):
our replies are heard while a cell awaits, and once a cell has ended, but never during a cell that
blocks the main thread. :func:`replies_reach_this_thread` says which case a waiting call is in;
``_seam.py`` asks it, and the drivers in ``_operations.py`` act on the answer.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections import deque
from collections.abc import Callable
from hmac import compare_digest
from typing import Any

from ._platform import in_background, in_browser

log = logging.getLogger("splitbrain_widget.kernel_tap")

# comm_id -> handler(content) -> True when it consumed the message. Called on the shell-channel
# thread: it must be quick, thread-safe and must not touch traitlets.
Handler = Callable[[dict[str, Any]], bool]

_handlers: dict[str, Handler] = {}
_lock = threading.Lock()
_installed_on: object | None = None  # the kernel object the tap wraps
_release: deque[dict[str, Any]] = deque(maxlen=100_000)
_release_scheduled = False
_seen_order: deque[bytes] = deque()  # signatures of consumed messages, oldest first (replay guard)
_seen_signatures: set[bytes] = set()
MAX_SEEN_SIGNATURES = 4096
RELEASE_BATCH = 100  # idle statuses published per turn of the main loop ...
RELEASE_PAUSE_S = 0.2  # ... and the pause before the next batch (at most 500/s)
stats = {"consumed": 0, "passed": 0, "bad_signature": 0, "errors": 0}


def kernel() -> Any | None:
    """The running ipykernel Kernel, or None outside one (never creates a kernel, never imports
    ipykernel: a running kernel has imported it already; cheap enough for every call)."""
    module = sys.modules.get("ipykernel.kernelbase")
    if module is None:
        return None
    kernel_class = module.Kernel
    return kernel_class.instance() if kernel_class.initialized() else None


def available() -> bool:
    """Whether this kernel has the shell-channel thread and stream the tap needs (ipykernel 7)."""
    k = kernel()
    return k is not None and _parts(k) is not None


def installed() -> bool:
    k = kernel()
    return k is not None and _installed_on is k


def replies_on_main_loop() -> bool:
    """Whether this kernel's main thread reads the shell stream (no shell-channel thread: ipykernel < 7).

    Decided by what the kernel object has, not by its version: a kernel that subclasses ipykernel's
    (Colab's, say) is judged by the attributes it really carries."""
    k = kernel()
    return k is not None and _parts(k) is None


def in_main_thread() -> bool:
    """True on the thread that runs cells (where a wait without the tap would deadlock)."""
    k = kernel()
    if k is None:
        return False
    thread = getattr(getattr(k, "shell_channel_thread", None), "parent_thread", None) or threading.main_thread()
    return threading.current_thread() is thread


def in_marimo_cell() -> bool:
    """Whether this thread runs a marimo cell: marimo hands a view's messages to Python only
    between cells, so a call made in one (blocking or awaited) cannot hear its answer before the
    cell ends. Judged by marimo's own execution context (its cell thread is the main thread in
    ``marimo edit`` and another in ``marimo run``); a thread of ours (the chat's) has none."""
    if "marimo" not in sys.modules:
        return False
    try:
        from marimo._runtime.context import safe_get_context
    except ImportError:  # a marimo without that module: not a host we know
        return False
    context = safe_get_context()
    return context is not None and getattr(context, "execution_context", None) is not None


def main_loop() -> Any | None:
    """The asyncio loop of the thread that runs cells (the kernel's main thread; in a marimo cell,
    marimo's loop of this session; in the browser, Pyodide's), or None outside a kernel."""
    if in_browser():
        import asyncio
        import warnings

        try:
            return asyncio.get_running_loop()
        except RuntimeError:
            pass
        with warnings.catch_warnings():  # Pyodide's loop is the policy's: no running loop needed to name it
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                return asyncio.get_event_loop()
            except RuntimeError:  # none set (not Pyodide: a test that patched the platform)
                return None
    if in_marimo_cell():
        import asyncio

        try:
            return asyncio.get_running_loop()
        except RuntimeError:
            return None
    k = kernel()
    io_loop = getattr(k, "io_loop", None) if k is not None else None
    return getattr(io_loop, "asyncio_loop", None)


def replies_reach_this_thread(*, awaiting: bool) -> bool:
    """Whether a page's reply can reach a call that waits on this thread while it waits.

    Always outside a kernel, and always with the shell-channel tap (ipykernel 7). Where the main
    loop reads the shell stream (ipykernel < 7), a wait on another thread (the chat panel's, the
    agent's) hears the reply once the running cell ends; on the main thread, a blocking wait never
    does (the cell holds the loop that would read it), and an awaited one does only with the tap
    wrapped on that loop and while it awaits on that loop (an ``await`` in a cell). In the browser
    (JupyterLite's Pyodide kernel) no call in a cell does, awaited or not: the kernel hands messages
    to Python only between cells; a task of the package's own that no cell waits for does."""
    if in_browser():
        return awaiting and in_background()
    if in_marimo_cell():
        return False
    k = kernel()
    if k is None or (_parts(k) is not None and installed()):
        return True
    if not in_main_thread():
        return True
    if not awaiting or not installed():
        return False
    import asyncio

    try:
        return asyncio.get_running_loop() is main_loop()
    except RuntimeError:
        return False


def describe() -> str:
    """This kernel in a few words, for a message that explains why a call did not wait."""
    if in_browser():
        return "the browser's Pyodide kernel (JupyterLite: a page's answer reaches Python after the cell)"
    if in_marimo_cell():
        version = getattr(sys.modules.get("marimo"), "__version__", "?")
        return f"marimo {version} (a view's answer reaches Python only between cells)"
    module = sys.modules.get("ipykernel")
    version = getattr(module, "__version__", "?")
    k = kernel()
    kind = f"{type(k).__module__}.{type(k).__name__}" if k is not None else "no kernel"
    where = ", no shell-channel thread" if replies_on_main_loop() else ""
    return f"ipykernel {version} ({kind}{where})"


def frontend_connected() -> bool:
    """Whether a frontend that renders widgets is likely connected to this kernel.

    True when a widget manager opened ipywidgets' control comm, or when the running cell came from
    a notebook UI (JupyterLab and Notebook 7 put ``cellId`` in the execute request's metadata);
    False under nbval, papermill or a script, which render nothing, so no call waits for a view there.
    """
    import ipywidgets

    if getattr(ipywidgets.Widget, "_control_comm", None) is not None:  # ipywidgets 8's control channel
        return True
    k = kernel()
    try:
        parent = k.get_parent() if k is not None else {}
    except Exception:
        return False
    return bool((parent or {}).get("metadata", {}).get("cellId"))


def call_on_main(fn: Callable[[], None]) -> None:
    """Run ``fn`` on the kernel's main loop when it is next free (at once outside a kernel)."""
    k = kernel()
    loop = getattr(k, "io_loop", None) if k is not None else None
    if loop is None:
        fn()
    else:
        loop.add_callback(_with_parent, fn)


def _with_parent(fn: Callable[[], None]) -> None:
    # The callback runs in a copy of the scheduling thread's context (often the shell-channel
    # thread's, where ipykernel 7.0 has no parent message): give it one, so that it can send.
    prepare_thread()
    fn()


def prepare_thread() -> None:
    """Make comm sends work on this thread.

    ipykernel 7.0 keeps the parent message in a ContextVar without a default, so a widget that
    sends from a fresh worker thread fails with LookupError; give such a thread an empty parent.
    """
    k = kernel()
    parent = getattr(k, "_shell_parent", None)
    if parent is None or not hasattr(parent, "get"):
        return
    try:
        parent.get()
    except LookupError:
        parent.set({})
        ident = getattr(k, "_shell_parent_ident", None)
        if ident is not None and hasattr(ident, "set"):
            ident.set(b"")


def register(comm_id: str, handler: Handler) -> None:
    with _lock:
        _handlers[comm_id] = handler


def unregister(comm_id: str) -> None:
    with _lock:
        _handlers.pop(comm_id, None)


def install(timeout: float = 5.0) -> bool:
    """Wrap the shell stream's receive callback (once per kernel). Returns whether the tap is active."""
    global _installed_on
    k = kernel()
    if k is None:
        return False
    if _installed_on is k:
        return True
    parts = _parts(k)
    if parts is None:
        return _install_on_main_loop(k, timeout)
    thread, stream = parts
    done = threading.Event()
    outcome: list[bool] = []

    def wrap() -> None:
        try:
            original = getattr(stream, "_recv_callback", None) or k.shell_channel_thread_main
            if getattr(original, "_splitbrain_tap", False):
                outcome.append(True)
                return
            stream.on_recv(_wrap(k, original), copy=False)
            _send_replies_through_stream(thread, stream)
            outcome.append(True)
        except Exception:
            log.exception("could not install the shell-channel tap")
            outcome.append(False)
        finally:
            done.set()

    if threading.current_thread() is thread:
        wrap()
    else:
        thread.io_loop.add_callback(wrap)
        done.wait(timeout)
    if outcome and outcome[0]:
        _installed_on = k
        return True
    return False


def _wrap(k: Any, original: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    """A shell stream's receive callback that takes our messages out and passes on every other one."""

    def tap(frames: list[Any]) -> Any:
        try:
            if _consume(k, frames):
                return None
        except Exception:
            stats["errors"] += 1
            log.debug("tap failed to inspect a message; passing it on", exc_info=True)
        stats["passed"] += 1
        return original(frames)

    tap._splitbrain_tap = True  # type: ignore[attr-defined]
    return tap


def _install_on_main_loop(k: Any, timeout: float) -> bool:
    """ipykernel < 7: wrap the receive callback of the shell stream that the main loop reads.

    ipykernel 6 reads ``kernel.shell_stream``, 5 each of ``kernel.shell_streams`` but the control
    stream; both hand every message to a queue the kernel works through one at a time, so an
    awaited cell holds up every message behind it, our replies too. Taken out at the stream, they
    settle an awaited call while its cell awaits. The wrap runs on the main thread (the stream's)."""
    global _installed_on
    stream = _main_loop_stream(k)
    io_loop = getattr(k, "io_loop", None)
    if stream is None or io_loop is None:
        log.info("shell-channel tap unavailable: this kernel has no shell stream to wrap")
        return False
    done = threading.Event()
    outcome: list[bool] = []

    def wrap() -> None:
        try:
            original = getattr(stream, "_recv_callback", None)
            if original is None:
                outcome.append(False)
            elif getattr(original, "_splitbrain_tap", False):
                outcome.append(True)
            else:
                stream.on_recv(_wrap(k, original), copy=False)
                outcome.append(True)
        except Exception:
            log.exception("could not install the tap on the main loop's shell stream")
            outcome.append(False)
        finally:
            done.set()

    if threading.current_thread() is threading.main_thread():
        wrap()
    else:
        io_loop.add_callback(wrap)
        done.wait(timeout)
    if outcome and outcome[0]:
        _installed_on = k
        return True
    return False


def _main_loop_stream(k: Any) -> Any | None:
    stream = getattr(k, "shell_stream", None)
    if stream is None:
        control = getattr(k, "control_stream", None)
        stream = next((s for s in getattr(k, "shell_streams", None) or () if s is not control), None)
    return stream if stream is not None and hasattr(stream, "on_recv") else None


def _send_replies_through_stream(thread: Any, stream: Any) -> bool:
    """On ipykernel 7.0-7.3, send shell replies through the shell stream instead of raw on its socket.

    Those kernels forward each reply (from the main shell and from subshells) to the client with a
    raw ``send_multipart`` on the shell ROUTER, the socket a ZMQStream reads requests from. A raw
    send processes the socket's pending commands and so consumes its edge-triggered read wake-up;
    the stream, which never saw the send, does not look again, and a request that landed meanwhile
    stays unread until something else wakes the socket (a new client connection). The cell the
    frontend just sent never starts. A burst of replies from a page during a cell makes the window
    common: the kernel tests hung in 2 runs of 3 on 7.3.0. ipykernel 7.4 sends through the stream
    (ipython/ipykernel#1529); this does the same on the kernels without that fix. Returns whether
    anything was changed. Runs on the shell-channel thread.
    """
    manager = getattr(thread, "_manager", None)
    if manager is None or hasattr(manager, "_shell_stream") or not hasattr(manager, "_shell_socket"):
        return False  # 7.4 and later keep the stream the only user of the socket
    to_main = getattr(manager, "_main_to_shell_channel", None)
    if to_main is None or not hasattr(to_main, "on_recv"):
        return False

    def send(msg: list[Any]) -> None:
        stream.send_multipart(msg, copy=False)

    loop = thread.io_loop
    manager._send_on_shell_channel = send  # subshells created later bind this attribute
    to_main.on_recv(loop, send)  # the main shell's replies (bound when the kernel started)
    with manager._lock_cache:
        subshells = list(manager._cache.values())
    for subshell in subshells:  # subshells that exist already
        subshell.subshell_to_shell_channel.on_recv(loop, send)
    log.debug("shell replies now go through the shell stream (ipykernel < 7.4)")
    return True


def _parts(k: Any) -> tuple[Any, Any] | None:
    thread = getattr(k, "shell_channel_thread", None)
    stream = getattr(k, "shell_stream", None)
    if thread is None or stream is None or getattr(thread, "io_loop", None) is None:
        return None
    if not hasattr(stream, "on_recv") or not hasattr(k, "shell_channel_thread_main"):
        return None
    return thread, stream


def _bytes(frame: Any) -> bytes:
    return frame.bytes if hasattr(frame, "bytes") else bytes(frame)


def _consume(k: Any, frames: list[Any]) -> bool:
    """Hand one of our widgets' comm messages to its handler and report whether to drop it."""
    if not _handlers:
        return False
    session = k.session
    _idents, parts = session.feed_identities(frames, copy=False)
    if len(parts) < 5:
        return False
    header = session.unpack(_bytes(parts[1]))
    if header.get("msg_type") != "comm_msg":
        return False
    content = session.unpack(_bytes(parts[4]))
    handler = _handlers.get(content.get("comm_id", ""))
    data = content.get("data")
    if handler is None or not isinstance(data, dict) or data.get("method") != "custom":
        return False
    if session.auth is not None:
        signature = _bytes(parts[0])
        expected = session.sign([_bytes(p) for p in parts[1:5]])
        if not signature or signature in _seen_signatures or not compare_digest(signature, expected):
            stats["bad_signature"] += 1
            return False  # let ipykernel reject it the usual way
        _seen_signatures.add(signature)
        _seen_order.append(signature)
        if len(_seen_order) > MAX_SEEN_SIGNATURES:
            _seen_signatures.discard(_seen_order.popleft())
    inner = data.get("content")
    if not isinstance(inner, dict) or not handler(inner):
        return False
    stats["consumed"] += 1
    # ipykernel 7.4 remembers which subshell sent each request id and forgets it when the reply
    # passes its router; this reply will not, so forget it here.
    comm = k.comm_manager.get_comm(content["comm_id"]) if hasattr(k, "comm_manager") else None
    forget = getattr(comm, "_reply_subshell_for", None)
    if forget is not None:
        forget(data, None)
    _schedule_release(header)
    return True


def _schedule_release(header: dict[str, Any]) -> None:
    global _release_scheduled
    with _lock:
        _release.append(header)
        if _release_scheduled:
            return
        _release_scheduled = True
    call_on_main(_release_frontend_futures)


def _release_frontend_futures() -> None:
    """Publish the idle status each dropped message's sender waits for before forgetting it.

    At most ``RELEASE_BATCH`` per turn of the main loop, the rest ``RELEASE_PAUSE_S`` later: a
    thousand replies consumed during one cell would otherwise put a thousand statuses on IOPub at
    once, and ZeroMQ's PUB socket drops whatever passes its high-water mark (1000) while the reader
    is behind, other messages (a cell's output, its idle status, requests) included.
    """
    global _release_scheduled
    with _lock:
        headers = [_release.popleft() for _ in range(min(RELEASE_BATCH, len(_release)))]
        more = bool(_release)
        _release_scheduled = more
    k = kernel()
    if k is None:
        return
    if more:
        loop = getattr(k, "io_loop", None)
        if loop is not None:
            loop.call_later(RELEASE_PAUSE_S, _with_parent, _release_frontend_futures)
        else:  # pragma: no cover - a kernel without a loop cannot have scheduled this
            with _lock:
                _release_scheduled = False
    if not headers:
        return
    topic = k._topic("status") if hasattr(k, "_topic") else b"kernel.status"
    for header in headers:
        try:
            k.session.send(
                k.iopub_socket, "status", {"execution_state": "idle"}, parent={"header": header}, ident=topic
            )
        except Exception:
            log.debug("could not publish an idle status", exc_info=True)
            return
