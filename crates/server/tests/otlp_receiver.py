#!/usr/bin/env python3
"""A minimal OTLP/HTTP trace receiver for the tests.

Usage: otlp_receiver.py OUT_FILE

Listens on 127.0.0.1 (a free port, printed as the first line of stdout),
accepts POST /v1/traces with a JSON body, and parses it strictly as an
ExportTraceServiceRequest with the official protobuf definitions
(opentelemetry-proto): unknown fields, wrong types or malformed ids are
refused with 400. Each request is appended to OUT_FILE as one JSON line:
{"ok": true, "headers": {...}, "resource": {...}, "spans": [...]} with ids
as hex and attribute values decoded, or {"ok": false, "error": "..."}.
Exits when stdin closes (the test dropped it).
"""

import base64
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)

ID_FIELDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


def hex_ids_to_base64(node):
    """OTLP/JSON writes ids as hex, where proto3 JSON wants base64."""
    if isinstance(node, list):
        for item in node:
            hex_ids_to_base64(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key in ID_FIELDS and isinstance(value, str):
                raw = bytes.fromhex(value)  # ValueError on bad hex
                if len(raw) != ID_FIELDS[key]:
                    raise ValueError(f"{key} has {len(raw)} bytes")
                node[key] = base64.b64encode(raw).decode()
            else:
                hex_ids_to_base64(value)


def any_value(v):
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [any_value(x) for x in v.array_value.values]
    if kind is None:
        return None
    return getattr(v, kind)


def attrs(kvs):
    return {kv.key: any_value(kv.value) for kv in kvs}


def summarize(request):
    resources, spans = [], []
    for rs in request.resource_spans:
        resources.append(attrs(rs.resource.attributes))
        for ss in rs.scope_spans:
            for s in ss.spans:
                spans.append(
                    {
                        "scope": ss.scope.name,
                        "trace_id": s.trace_id.hex(),
                        "span_id": s.span_id.hex(),
                        "parent_span_id": s.parent_span_id.hex(),
                        "name": s.name,
                        "kind": s.kind,
                        "start": s.start_time_unix_nano,
                        "end": s.end_time_unix_nano,
                        "attributes": attrs(s.attributes),
                        "events": [e.name for e in s.events],
                        "status": {"code": s.status.code, "message": s.status.message},
                    }
                )
    return resources, spans


class Handler(BaseHTTPRequestHandler):
    out = None
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def record(self, entry):
        with self.lock, open(self.out, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        if self.path != "/v1/traces":
            self.record({"ok": False, "error": f"path {self.path}"})
            return self.reply(404, {})
        if self.headers.get("Content-Type", "").split(";")[0] != "application/json":
            self.record({"ok": False, "error": "content type"})
            return self.reply(415, {})
        try:
            doc = json.loads(body)
            hex_ids_to_base64(doc)
            request = json_format.Parse(json.dumps(doc), ExportTraceServiceRequest())
        except Exception as e:  # noqa: BLE001 - any parse failure is a 400
            self.record({"ok": False, "error": f"{type(e).__name__}: {e}"})
            return self.reply(400, {"error": str(e)})
        resources, spans = summarize(request)
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower().startswith("x-")}
        self.record({"ok": True, "headers": headers, "resources": resources, "spans": spans})
        self.reply(200, {})


def main():
    Handler.out = sys.argv[1]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # until the test closes it
    server.shutdown()


if __name__ == "__main__":
    main()
