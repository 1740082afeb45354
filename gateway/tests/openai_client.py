"""Talks to Toolgate's OpenAI-compatible endpoint with the official `openai` package, the way an
SDK user would, and prints what came back as one JSON object (read by the Rust test
`openai::the_official_openai_python_client_talks_to_the_gateway`).

Environment: TOOLGATE_BASE_URL (http://HOST:PORT/v1), TOOLGATE_TOKEN (a bearer JWT from the
identity provider), TOOLGATE_SITE (the site id sent as X-Toolgate-Site).
"""

import json
import os

import openai

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add_task",
            "description": "Add a task to the board",
            "parameters": {
                "type": "object",
                "properties": {"title": {"type": "string"}},
                "required": ["title"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "delete_task",
            "description": "Delete a task from the board",
            "parameters": {"type": "object", "properties": {"id": {"type": "number"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "transfer_funds",
            "description": "Transfer funds between accounts",
            "parameters": {
                "type": "object",
                "properties": {"amount": {"type": "number"}},
                "required": ["amount"],
            },
        },
    },
]


def client(api_key):
    return openai.OpenAI(
        base_url=os.environ["TOOLGATE_BASE_URL"],
        api_key=api_key,
        default_headers={"X-Toolgate-Site": os.environ["TOOLGATE_SITE"]},
        max_retries=0,
        timeout=30,
    )


def calls(tool_calls):
    return [
        {"name": call.function.name, "arguments": json.loads(call.function.arguments)}
        for call in tool_calls or []
    ]


def whole(gateway, model, message):
    completion = gateway.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": message}],
        tools=TOOLS,
        max_tokens=256,
    )
    choice = completion.choices[0]
    return {
        "content": choice.message.content,
        "tool_calls": calls(choice.message.tool_calls),
        "finish_reason": choice.finish_reason,
        "usage": completion.usage.model_dump() if completion.usage else None,
    }


def streamed(gateway, model, message):
    stream = gateway.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": message}],
        tools=TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    content, pending, finish_reason, usage = "", {}, None, None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage.model_dump()
        for choice in chunk.choices:
            delta = choice.delta
            content += delta.content or ""
            for piece in delta.tool_calls or []:
                call = pending.setdefault(piece.index, {"name": "", "arguments": ""})
                call["name"] += piece.function.name or ""
                call["arguments"] += piece.function.arguments or ""
            finish_reason = choice.finish_reason or finish_reason
    tool_calls = [
        {"name": call["name"], "arguments": json.loads(call["arguments"])}
        for _, call in sorted(pending.items())
    ]
    return {"content": content, "tool_calls": tool_calls, "finish_reason": finish_reason, "usage": usage}


def main():
    gateway = client(os.environ["TOOLGATE_TOKEN"])
    models = [model.id for model in gateway.models.list()]
    model = models[0]
    results = {
        "models": models,
        "whole": whole(gateway, model, 'Please add a task: "Call carol.chen@corp.example"'),
        "streamed": streamed(gateway, model, 'Please add a task: "Water the plants"'),
        "approval": streamed(gateway, model, "Transfer funds: 250"),
    }
    try:
        client("not-a-token").chat.completions.create(
            model=model, messages=[{"role": "user", "content": "hello"}]
        )
        results["refused"] = None
    except openai.AuthenticationError as error:
        results["refused"] = {"status": error.status_code, "code": error.code}
    print(json.dumps(results))


if __name__ == "__main__":
    main()
