"""An A2A 1.0 test server for the oxiscope-a2a integration tests.

Built on the official `a2a-sdk` (see `.ci/run` for the pinned version). It
binds 127.0.0.1 on a free port, prints `PORT <n>` on stdout, then serves:

- the agent card at `/.well-known/agent-card.json` (streaming on unless the
  first argument is `--no-streaming`);
- JSON-RPC at `/`, with an agent whose behaviour depends on the user text:
  * `ask ...`     -> input-required ("What is your name?"); the next message
                     on that task completes it with "Hello, <text>!";
  * `fail ...`    -> failed, with a status message;
  * `direct ...`  -> a direct Message reply (no task);
  * `file ...`    -> an artifact with a raw-bytes part and a URL part;
  * `slow ...`    -> working, then waits until cancelled;
  * anything else -> working, then the echo streamed as artifact chunks
                     ("Echo: ", then the text in two halves), completed.
"""

import asyncio
import socket
import sys

import uvicorn
from starlette.applications import Starlette

from a2a.helpers.proto_helpers import new_text_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
)


class EchoExecutor(AgentExecutor):
    """Echoes the user's text through a small task lifecycle."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        task = context.current_task
        if text.startswith("direct"):
            await event_queue.enqueue_event(
                Message(
                    role=Role.ROLE_AGENT,
                    message_id="direct-" + (context.task_id or "x"),
                    context_id=context.context_id,
                    parts=[new_text_part("Direct: " + text)],
                )
            )
            return
        if task is None:
            task = Task(
                id=context.task_id,
                context_id=context.context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                history=[context.message],
            )
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        if task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED:
            await updater.add_artifact([new_text_part(f"Hello, {text}!")], artifact_id="greeting")
            await updater.complete()
            return
        await updater.start_work(updater.new_agent_message([new_text_part("Working...")]))
        if text.startswith("ask"):
            await updater.requires_input(updater.new_agent_message([new_text_part("What is your name?")]))
            return
        if text.startswith("fail"):
            await updater.failed(updater.new_agent_message([new_text_part("It broke.")]))
            return
        if text.startswith("file"):
            await updater.add_artifact(
                [
                    Part(raw=b"\x89PNG-bytes", media_type="image/png", filename="dot.png"),
                    Part(url="https://example.com/a.pdf", media_type="application/pdf"),
                ],
                artifact_id="files",
                last_chunk=True,
            )
            await updater.complete()
            return
        if text.startswith("slow"):
            await asyncio.sleep(60)
            await updater.complete()
            return
        half = len(text) // 2
        await updater.add_artifact([new_text_part("Echo: ")], artifact_id="echo")
        await updater.add_artifact([new_text_part(text[:half])], artifact_id="echo", append=True)
        await updater.add_artifact(
            [new_text_part(text[half:])], artifact_id="echo", append=True, last_chunk=True
        )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel(new_text_message("Cancelled."))


async def main() -> None:
    streaming = "--no-streaming" not in sys.argv[1:]
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    card = AgentCard(
        name="echo",
        description="Echoes text through an A2A task lifecycle.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=f"http://127.0.0.1:{port}/",
                protocol_binding="JSONRPC",
                protocol_version="1.0",
            )
        ],
        capabilities=AgentCapabilities(streaming=streaming),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="Echo", description="Echoes text.", tags=["echo"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    print(f"PORT {port}", flush=True)
    await server.serve(sockets=[sock])


if __name__ == "__main__":
    asyncio.run(main())
