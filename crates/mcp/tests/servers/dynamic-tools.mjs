// An MCP server over stdio whose tool list changes on request, for the
// tests of the toolkit refresh after `notifications/tools/list_changed`.
//
// Fixed tools:
//   echo {text}           answers "echo: <text>"
//   add-tool {name}       adds a tool `name` ({text} -> "<name> says: <text>")
//   remove-tool {name}    removes an added tool
//   break-listing {broken, silent?} makes every later tools/list fail (true)
//                         or work again (false)
// Each of the last three sends notifications/tools/list_changed after the
// change (break-listing not when `silent` is true). Tool names are the server's own; the client prefixes them.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";

const object = (properties, required) => ({ type: "object", properties, required });
const text = (value) => ({ content: [{ type: "text", text: value }] });

const fixed = [
  {
    name: "echo",
    description: "Answers with the text it got.",
    inputSchema: object({ text: { type: "string" } }, ["text"]),
  },
  {
    name: "add-tool",
    description: "Adds a tool that answers `<name> says: <text>`.",
    inputSchema: object({ name: { type: "string" } }, ["name"]),
  },
  {
    name: "remove-tool",
    description: "Removes a tool added with add-tool.",
    inputSchema: object({ name: { type: "string" } }, ["name"]),
  },
  {
    name: "break-listing",
    description: "Makes tools/list fail (broken: true) or work again (broken: false).",
    inputSchema: object({ broken: { type: "boolean" }, silent: { type: "boolean" } }, ["broken"]),
  },
];

const added = new Map();
let broken = false;

const server = new Server(
  { name: "oxiscope-dynamic-tools", version: "1.0.0" },
  { capabilities: { tools: { listChanged: true } } },
);

server.setRequestHandler(ListToolsRequestSchema, async () => {
  if (broken) {
    throw new McpError(ErrorCode.InternalError, "the tool listing is broken on purpose");
  }
  return { tools: [...fixed, ...added.values()] };
});

// Answers first, then announces the change, as a server would after
// reconfiguring itself.
const changed = (answer) => {
  setImmediate(() => {
    server.sendToolListChanged().catch(() => {});
  });
  return answer;
};

server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const { name, arguments: args = {} } = request.params;
  switch (name) {
    case "echo":
      return text(`echo: ${args.text}`);
    case "add-tool":
      added.set(args.name, {
        name: args.name,
        description: `Answers as ${args.name}.`,
        inputSchema: object({ text: { type: "string" } }, ["text"]),
      });
      return changed(text(`added ${args.name}`));
    case "remove-tool":
      return changed(text(added.delete(args.name) ? `removed ${args.name}` : `no ${args.name}`));
    case "break-listing":
      broken = Boolean(args.broken);
      if (args.silent) {
        return text(broken ? "listing broken" : "listing works");
      }
      return changed(text(broken ? "listing broken" : "listing works"));
    default:
      if (added.has(name)) {
        return text(`${name} says: ${args.text}`);
      }
      throw new McpError(ErrorCode.InvalidParams, `unknown tool ${name}`);
  }
});

await server.connect(new StdioServerTransport());
