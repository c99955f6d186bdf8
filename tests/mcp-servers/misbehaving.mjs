#!/usr/bin/env node
// A deliberately misbehaving MCP stdio server for Suzent's tests (no dependencies).
//
// - prints a banner and other non-JSON lines on stdout, and chatter on stderr;
// - `crash` exits the process in the middle of a call;
// - `add_tool` adds a tool and sends notifications/tools/list_changed;
// - has a very long tool name, a tool whose schema uses $ref/$defs/anyOf-null/$schema, and
//   `send_email`, which other instances (other servers) expose too;
// - `whoami` answers with the server's label (argv[2]), so a test sees which server ran a call;
// - `count_starts` reports how many times this label's process was started (a file in $MCP_STATE_DIR).
import { createInterface } from "node:readline";
import fs from "node:fs";
import path from "node:path";

const label = process.argv[2] || "misbehaving";
const stateDir = process.env.MCP_STATE_DIR;
let starts = 1;
if (stateDir) {
  const f = path.join(stateDir, `${label}.starts`);
  try { starts = Number(fs.readFileSync(f, "utf8")) + 1; } catch { starts = 1; }
  fs.writeFileSync(f, String(starts));
}

process.stdout.write(`Welcome to the misbehaving MCP server (${label})! This banner is not JSON.\n`);
process.stderr.write(`misbehaving server ${label} starting (start #${starts})\n`);

const LONG = "get_cost_and_usage_comparisons_with_forecast_by_dimension_and_granularity_for_all_linked_accounts";
const tools = [
  { name: "whoami", description: "Says which server answered.", inputSchema: { type: "object", properties: {} },
    annotations: { readOnlyHint: true } },
  { name: "send_email", description: "Pretends to send an email and says which server sent it.",
    inputSchema: { type: "object", properties: { to: { type: "string" }, body: { type: "string" } }, required: ["to"] } },
  { name: "crash", description: "Exits the server process in the middle of the call.", inputSchema: { type: "object", properties: {} } },
  { name: "add_tool", description: "Adds a tool named by `name` and notifies the client that the tool list changed.",
    inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
  { name: "count_starts", description: "How many times this server was started.", inputSchema: { type: "object", properties: {} } },
  { name: LONG, description: "A tool with a very long name (over 64 characters).", inputSchema: { type: "object", properties: {} } },
  { name: "create_invoice", description: "Schema with $ref, $defs, anyOf with null and additionalProperties.",
    inputSchema: {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: {
        customer: { $ref: "#/$defs/Customer" },
        note: { anyOf: [{ type: "string" }, { type: "null" }], default: null },
        lines: { type: "array", items: { $ref: "#/$defs/Line" } },
      },
      required: ["customer", "lines"],
      additionalProperties: false,
      $defs: {
        Customer: { type: "object", properties: { name: { type: "string" }, email: { type: ["string", "null"] } }, required: ["name"], additionalProperties: false },
        Line: { type: "object", properties: { item: { type: "string" }, qty: { type: "integer", minimum: 1 } }, required: ["item", "qty"] },
      },
    } },
];

function send(msg) { process.stdout.write(JSON.stringify(msg) + "\n"); }
function text(t, isError = false) { return { content: [{ type: "text", text: t }], isError }; }

const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  let msg;
  try { msg = JSON.parse(line); } catch { process.stderr.write(`bad line: ${line}\n`); return; }
  const { id, method, params } = msg;
  if (id === undefined) return; // notifications
  if (method === "initialize") {
    process.stdout.write("initializing... (more non-JSON chatter)\n");
    send({ jsonrpc: "2.0", id, result: {
      protocolVersion: "2025-06-18",
      capabilities: { tools: { listChanged: true } },
      serverInfo: { name: `misbehaving-${label}`, version: "1.0.0" },
    } });
  } else if (method === "tools/list") {
    send({ jsonrpc: "2.0", id, result: { tools } });
  } else if (method === "tools/call") {
    const name = params?.name;
    const args = params?.arguments || {};
    if (name === "crash") {
      process.stderr.write("crashing on purpose\n");
      process.exit(3);
    } else if (name === "whoami") {
      send({ jsonrpc: "2.0", id, result: text(`server ${label}`) });
    } else if (name === "send_email") {
      send({ jsonrpc: "2.0", id, result: text(`email to ${args.to} sent by server ${label}`) });
    } else if (name === "count_starts") {
      send({ jsonrpc: "2.0", id, result: text(`started ${starts} times`) });
    } else if (name === "add_tool") {
      tools.push({ name: String(args.name), description: `Added at run time (${args.name}).`, inputSchema: { type: "object", properties: {} } });
      send({ jsonrpc: "2.0", id, result: text(`added ${args.name}`) });
      send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
    } else if (name === LONG) {
      send({ jsonrpc: "2.0", id, result: text(`long tool ran on ${label}`) });
    } else if (name === "create_invoice") {
      send({ jsonrpc: "2.0", id, result: text(`invoice for ${args.customer?.name} with ${(args.lines || []).length} lines`) });
    } else if (tools.some((t) => t.name === name)) {
      send({ jsonrpc: "2.0", id, result: text(`${name} ran on ${label}`) });
    } else {
      send({ jsonrpc: "2.0", id, error: { code: -32602, message: `unknown tool ${name}` } });
    }
  } else if (method === "ping") {
    send({ jsonrpc: "2.0", id, result: {} });
  } else {
    send({ jsonrpc: "2.0", id, error: { code: -32601, message: `method not found: ${method}` } });
  }
});
rl.on("close", () => process.exit(0));
